//! Python virtual environments with pinned requirements (every package
//! `==`), in the test-tools cache ([`crate::cache`]), keyed by a hash of
//! the requirements.

use std::path::PathBuf;
use std::process::Command;

use crate::{cache, system, ToolError};

/// The `bin` directory of a virtual environment named `name` with
/// `requirements` (a requirements file's text) installed; `pip_args` are
/// added to `pip install` (e.g. `--only-binary PKG`).
///
/// # Errors
///
/// When python3 or its `venv` module is missing, or pip fails, saying what
/// to install.
pub fn venv(name: &str, requirements: &str, pip_args: &[&str]) -> Result<PathBuf, ToolError> {
    let dir = format!(
        "{name}-{}",
        cache::key(&[requirements, &pip_args.join(" ")])
    );
    let dir = cache::install_once(&dir, |dir| {
        system::python3_venv()?;
        let venv = dir.join("venv");
        cache::run(
            Command::new("python3").args(["-m", "venv"]).arg(&venv),
            "python3 -m venv",
            system::INSTALL_PYTHON_VENV,
        )?;
        let file = dir.join("requirements.txt");
        std::fs::write(&file, requirements).map_err(ToolError::io("writing", &file))?;
        cache::run(
            Command::new(venv.join("bin/pip"))
                .args(["install", "--quiet", "--disable-pip-version-check"])
                .args(pip_args)
                .arg("-r")
                .arg(&file),
            &format!("pip install of the pinned requirements of {name}"),
            system::INSTALL_PYTHON_VENV,
        )
    })?;
    Ok(dir.join("venv/bin"))
}
