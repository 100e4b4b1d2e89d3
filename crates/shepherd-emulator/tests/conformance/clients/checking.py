"""What both client scripts check with: one line per check, the first
failure raises (and the script exits non-zero with its traceback)."""


def check(what, ok, detail=""):
    if not ok:
        raise AssertionError(f"{what}: {detail}")
    print(f"ok: {what}")


def expect_error(what, status, call, error_type, status_of):
    """Calls `call`, which must raise `error_type` with HTTP `status`
    (`status_of(err)`); returns the error."""
    try:
        call()
    except error_type as err:
        check(what, status_of(err) == status, f"status {status_of(err)}, wanted {status}: {err}")
        return err
    raise AssertionError(f"{what}: no error, wanted {status}")
