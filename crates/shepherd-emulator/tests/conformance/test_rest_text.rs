//! REST answers that are not JSON: a pull request asked for as a diff.

use shepherd_emulator::EmulatedForge;

use crate::scenario::{start, ALICE};

#[tokio::test]
async fn a_pull_request_asked_for_as_a_diff_is_the_diff() {
    let emu = start(EmulatedForge::GitHub).await;
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    for root in [emu.api_url(), emu.enterprise_api_url()] {
        // Pull request 1, as Alice.
        let pull = || {
            client
                .get(format!("{root}/repos/acme/widgets/pulls/1"))
                .header("authorization", format!("token {ALICE}"))
        };
        let response = pull()
            .header("accept", "application/vnd.github.diff")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 200);
        let kind = response.headers()["content-type"]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(kind.starts_with("application/vnd.github.diff"), "{kind}");
        let text = response.text().await.unwrap();
        assert!(
            text.starts_with("diff --git a/README.md b/README.md\n"),
            "{text}"
        );
        assert!(
            text.contains("diff --git a/src/lib.rs b/src/lib.rs\n"),
            "{text}"
        );
        assert!(text.contains("\n+line 5\n"), "{text}");
        assert!(text.ends_with('\n'), "{text}");
        // Without the media type it is the JSON object.
        let json: serde_json::Value = pull().send().await.unwrap().json().await.unwrap();
        assert_eq!(json["number"], 1);
    }
}
