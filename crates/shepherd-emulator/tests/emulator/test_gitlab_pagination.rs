//! GitLab's offset pagination: `per_page` (20 by default, at most 100),
//! `page`, and the `X-Next-Page`, `X-Page`, `X-Per-Page`, `X-Total`,
//! `X-Total-Pages` and `Link` headers, followed to the end.

use std::collections::BTreeSet;

use reqwest::Method;

use crate::common::*;

#[tokio::test]
async fn discussions_page_with_x_next_page_until_the_end() {
    let emu = start(gitlab_scenario(250, 2)).await;
    let first = mr_path("/discussions?per_page=100");
    let (status, headers, page) = gl(&emu, Method::GET, &first, Some(ALICE), None).await;
    assert_eq!(status, 200);
    let header = |h: &reqwest::header::HeaderMap, name: &str| {
        h.get(name).unwrap().to_str().unwrap().to_owned()
    };
    assert_eq!(page.as_array().unwrap().len(), 100);
    assert_eq!(header(&headers, "x-page"), "1");
    assert_eq!(header(&headers, "x-per-page"), "100");
    assert_eq!(
        header(&headers, "x-total"),
        "251",
        "250 threads and a comment"
    );
    assert_eq!(header(&headers, "x-total-pages"), "3");
    assert_eq!(header(&headers, "x-next-page"), "2");
    assert_eq!(header(&headers, "x-prev-page"), "");
    let link = header(&headers, "link");
    assert!(
        link.contains(&format!(
            "<{}/api/v4{first}&page=2>; rel=\"next\"",
            emu.api_url()
        )),
        "{link}"
    );
    assert!(link.contains("page=3>; rel=\"last\""), "{link}");

    // Follow X-Next-Page as a client does.
    let mut ids = BTreeSet::new();
    let mut next = Some("1".to_owned());
    let mut requests = 0;
    while let Some(n) = next.filter(|n| !n.is_empty()) {
        let path = mr_path(&format!("/discussions?per_page=100&page={n}"));
        let (status, headers, page) = gl(&emu, Method::GET, &path, Some(ALICE), None).await;
        assert_eq!(status, 200);
        requests += 1;
        for discussion in page.as_array().unwrap() {
            assert!(ids.insert(discussion["id"].as_str().unwrap().to_owned()));
        }
        next = Some(header(&headers, "x-next-page"));
    }
    assert_eq!(requests, 3);
    assert_eq!(ids.len(), 251);

    // The default page size is 20; past the end is an empty page.
    let (_, headers, page) = gl(
        &emu,
        Method::GET,
        &mr_path("/discussions"),
        Some(ALICE),
        None,
    )
    .await;
    assert_eq!(page.as_array().unwrap().len(), 20);
    assert_eq!(header(&headers, "x-total-pages"), "13");
    let (_, headers, page) = gl(
        &emu,
        Method::GET,
        &mr_path("/discussions?page=99"),
        Some(ALICE),
        None,
    )
    .await;
    assert_eq!(page.as_array().unwrap().len(), 0);
    assert_eq!(header(&headers, "x-next-page"), "");
    let (status, _, _) = gl(
        &emu,
        Method::GET,
        &mr_path("/discussions?per_page=x"),
        Some(ALICE),
        None,
    )
    .await;
    assert_eq!(status, 400);
    let (_, headers, _) = gl(
        &emu,
        Method::GET,
        &mr_path("/notes?per_page=500"),
        Some(ALICE),
        None,
    )
    .await;
    assert_eq!(header(&headers, "x-per-page"), "100", "at most 100");
}
