// Drives the dashboard in a real headless Chromium (one launch) for the
// `browser` test of shepherd-serve: opens the printed URL, checks that a
// comment holding <script> and <img onerror> shows as text and runs
// nothing, changes one decision and edits one reply in the approval
// table, approves and resumes, and watches the page (live updates, no
// reload) until the run converges. Prints one JSON line of what it saw;
// exits non-zero on the first failed check.
//
// Environment: SHEPHERD_URL (with the secret), RUN_ID, EDIT_ITEM and
// EDIT_REPLY (the reply to edit), CHANGE_ITEM, CHANGE_DECISION and
// CHANGE_REPLY (the decision to change), SCRIPT_ITEM (the item whose
// comment holds markup), SCREENSHOTS (a directory, optional),
// CHROMIUM (the executable).
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const { chromium } = require("playwright-core");

const env = (k) => {
  const v = process.env[k];
  if (!v) { throw new Error(`${k} is not set`); }
  return v;
};

function check(cond, what) {
  if (!cond) { throw new Error(`check failed: ${what}`); }
}

(async () => {
  const seen = { dialogs: [], pageErrors: [] };
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "shepherd-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  const shots = process.env.SCREENSHOTS;
  const shot = async (page, name) => {
    if (shots) { await page.screenshot({ path: path.join(shots, name), fullPage: true }); }
  };
  let page;
  try {
    page = context.pages()[0] || (await context.newPage());
    page.on("dialog", async (d) => { seen.dialogs.push(d.message()); await d.dismiss(); });
    page.on("pageerror", (e) => seen.pageErrors.push(String(e)));
    const runId = env("RUN_ID");

    // The printed URL: the secret becomes a cookie, the page is the runs list.
    await page.goto(env("SHEPHERD_URL"));
    check(!page.url().includes("token="), `the secret left the URL: ${page.url()}`);
    await page.locator(`tr[data-run="${runId}"]`).waitFor();
    check((await page.locator(`tr[data-run="${runId}"] [data-status]`).textContent()) === "paused",
      "the runs list shows the run paused");
    await shot(page, "runs.png");

    await page.click(`tr[data-run="${runId}"] a`);
    await page.locator("#approval").waitFor();

    // Markup in a comment is text: nothing ran, no element was made of it.
    const scriptRow = page.locator(`#approval tr[data-item="${env("SCRIPT_ITEM")}"] td.excerpt`);
    const excerpt = await scriptRow.textContent();
    check(excerpt.includes("<script>window.__pwned = 1</script>"), `excerpt as text: ${excerpt}`);
    check(excerpt.includes("onerror="), `img as text: ${excerpt}`);
    check((await scriptRow.locator("script, img").count()) === 0, "no element made of the comment");
    check((await page.evaluate(() => window.__pwned)) === undefined, "no script of the comment ran");

    // Change one decision (with the reply it needs) and edit one reply.
    const change = page.locator(`#approval tr[data-item="${env("CHANGE_ITEM")}"]`);
    await change.locator("select").selectOption(env("CHANGE_DECISION"));
    await change.locator("textarea").fill(env("CHANGE_REPLY"));
    const edit = page.locator(`#approval tr[data-item="${env("EDIT_ITEM")}"]`);
    await edit.locator("textarea").fill(env("EDIT_REPLY"));
    await shot(page, "approval.png");

    await Promise.all([page.waitForNavigation(), page.click("#approve-resume")]);
    check(new URL(page.url()).pathname === `/runs/${runId}`,
      `the approval was refused: ${page.url()}: ${(await page.content()).slice(0, 2000)}`);
    check((await page.locator(".error").count()) === 0,
      `the approval was refused: ${await page.locator(".error").allTextContents()}`);

    // From here the page is never reloaded: the live part must follow the run.
    await page.evaluate(() => { window.__sameDocument = true; });
    await page.locator('#live #status [data-status="converged"]').waitFor({ timeout: 120000 });
    check((await page.evaluate(() => window.__sameDocument)) === true, "the page was not reloaded");
    const liveUpdates = Number(await page.locator("#live").getAttribute("data-version"));
    check(liveUpdates >= 1, "the live part was refreshed");
    const edited = await page.locator(`#threads tr[data-item="${env("EDIT_ITEM")}"] pre.reply`).textContent();
    check(edited.includes(env("EDIT_REPLY")), `the threads table shows the edited reply: ${edited}`);
    await shot(page, "converged.png");

    check(seen.dialogs.length === 0, `dialogs: ${seen.dialogs}`);
    check(seen.pageErrors.length === 0, `page errors: ${seen.pageErrors}`);
    check((await page.evaluate(() => window.__pwned)) === undefined, "no script ran after the updates");
    console.log(JSON.stringify({ ok: true, liveUpdates, seen }));
  } catch (e) {
    // What the page showed when a check failed.
    let live = "";
    try {
      if (shots) { await page.screenshot({ path: path.join(shots, "failure.png"), fullPage: true }); }
      live = await page.locator("main").innerText();
    } catch (_) { /* the page is gone */ }
    throw new Error(`${e && e.stack ? e.stack : e}\n--- the page (${page && page.url()}):\n${live.slice(0, 4000)}`);
  } finally {
    await context.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  }
})().catch((e) => {
  console.error(String(e && e.stack ? e.stack : e));
  process.exit(1);
});
