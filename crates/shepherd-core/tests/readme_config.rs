//! The configuration example in the README must be a valid `shepherd.toml`.

use shepherd_core::config::{Config, ConfigLayer};

#[test]
fn the_readme_configuration_example_parses() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md");
    let start = readme
        .find("```toml\n# shepherd.toml\n")
        .expect("the README has a shepherd.toml example");
    let body = &readme[start + "```toml\n".len()..];
    let example = &body[..body.find("```").expect("the example is closed")];
    let config = Config::layered(&[ConfigLayer::repo("README.md", example)])
        .unwrap_or_else(|e| panic!("the README's example is invalid: {e}"));
    assert_eq!(config.loop_.max_rounds, 8);
    assert_eq!(config.cluster.min_volume, 4);
}
