# greet NAME: prints a greeting.
greet() {
    echo "Hello, $1!"
}
