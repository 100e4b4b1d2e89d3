# Logging in.

# login USER PASSWORD: checks the password, opens a session, prints its id.
login() {
    password_check "$1" "$2"
    session_open "$1"
}
