# Sessions: one file per session in $SESSION_DIR, holding the user's name.

# session_open USER: creates a session for USER and prints its id.
session_open() {
    id=$(token_new "$1")
    echo "$1" > "$SESSION_DIR/$id"
    echo "$id"
}

# session_user ID: prints the user of session ID.
session_user() {
    cat "$SESSION_DIR/$1"
}
