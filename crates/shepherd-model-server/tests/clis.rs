//! The pinned CLIs install (once) and are the pinned versions.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test fails

use std::process::Command;

use shepherd_model_server::clis::{self, installed_cli, CLIS};

#[test]
fn every_pinned_cli_installs_and_reports_its_pinned_version() {
    for (name, package) in CLIS {
        let bin = installed_cli(name);
        assert!(
            !bin.starts_with(env!("CARGO_MANIFEST_DIR")),
            "{name} installed inside the clone: {}",
            bin.display()
        );
        let out = Command::new(&bin)
            .arg("--version")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("NO_UPDATE_NOTIFIER", "1")
            .output()
            .expect("runs");
        let printed = String::from_utf8_lossy(&out.stdout);
        let pinned = clis::pinned_version(package).unwrap();
        assert!(
            printed.contains(&pinned),
            "{name} --version printed {printed:?}, pinned {pinned}"
        );
    }
    // A second call finds the marked install.
    let dir = clis::install_dir().unwrap();
    assert!(dir.join(".shepherd-installed").exists());
}
