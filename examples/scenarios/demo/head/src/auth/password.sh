# Password checks against the user database ($AUTH_DB: "user:password" lines).

# password_check USER PASSWORD: succeeds when PASSWORD is USER's password.
password_check() {
    expected=$(grep "^$1:" "$AUTH_DB" | cut -d: -f2)
    [ "$2" = "$expected" ]
}
