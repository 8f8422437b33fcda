//go:build unix

package main_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kosong-host/kosong-host/host/testcomponent"
)

// chromium starts Debian's headless chromium for the test, with a fresh
// profile; it is stopped in t.Cleanup.
func chromium(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		testcomponent.Missing(t, err)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
	})
	// The browser lives as long as the context of the first action: the
	// tab's own, not a step's with a timeout.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

// noteWith is the XPath of a transcript note containing text.
func noteWith(text string) string {
	return `//div[contains(concat(" ", @class, " "), " note ") and contains(., "` + text + `")]`
}

// TestWebPage: in real headless chromium the page signs in with the
// token (kept out of the URL), lists the sessions, opens one, sends a
// message and shows the streamed answer as Markdown with the model's
// markup shown as text, answers an approval and shows the tool's output,
// and cancels a running turn.
func TestWebPage(t *testing.T) {
	srv := startScriptedServer(t, `
turns:
  - text: "Hello **world** <img src=x onerror=document.title='pwned'> done"
  - tool_calls: [{id: c1, name: Shell, arguments: {command: "echo ran-by-shell"}}]
  - text: "Ran it."
  - text: "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
    delay: 2s
`)
	id, _ := srv.newSession(t)
	ctx := chromium(t)
	row := `tr[data-id="` + id + `"]`
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, expectWithin)
		defer cancel()
		if err := chromedp.Do(sctx, steps...); err != nil {
			page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
			t.Fatalf("%s: %v\npage:\n%s\nserver:\n%s", what, err, page, srv.Log())
		}
	}
	get := func(a chromedp.Action[string]) string {
		t.Helper()
		v, err := chromedp.Run(ctx, a)
		if err != nil {
			t.Fatalf("%v\nserver:\n%s", err, srv.Log())
		}
		return v
	}

	do("signing in",
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), "wrong-token"),
		chromedp.Click(chromedp.CSS("#signin-form button")),
		chromedp.WaitVisible(`//p[@id="signin-error" and contains(., "wrong bearer token")]`),
		chromedp.SendKeys(chromedp.CSS("#token"), srv.Token),
		chromedp.Click(chromedp.CSS("#signin-form button")),
		chromedp.WaitVisible(chromedp.CSS(row)),
	)
	href := get(chromedp.Evaluate[string](`location.href`))
	stored := get(chromedp.Evaluate[string](`sessionStorage.getItem("kosong-host-token")`))
	if strings.Contains(href, srv.Token) || stored != srv.Token {
		t.Errorf("the token: URL %q, sessionStorage %q", href, stored)
	}

	do("the first turn",
		chromedp.Click(chromedp.CSS(row)),
		chromedp.WaitVisible(chromedp.CSS("#message")),
		chromedp.SendKeys(chromedp.CSS("#message"), "hello"),
		chromedp.Click(chromedp.CSS("#send")),
		chromedp.WaitVisible(noteWith("turn ended: done")),
	)
	strong := get(chromedp.Text(chromedp.CSS(".msg.assistant strong")))
	answer := get(chromedp.Text(chromedp.CSS(".msg.assistant")))
	imgs, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#transcript img").length`))
	if err != nil {
		t.Fatal(err)
	}
	title := get(chromedp.Title())
	if strong != "world" || !strings.Contains(answer, "<img src=x onerror=") || imgs != 0 || title == "pwned" {
		t.Errorf("the answer: bold %q, text %q, %d images, title %q", strong, answer, imgs, title)
	}

	do("the approval",
		chromedp.SendKeys(chromedp.CSS("#message"), "run it"),
		chromedp.Click(chromedp.CSS("#send")),
		chromedp.WaitVisible(chromedp.CSS(`.request.approval button[data-decision="once"]`)),
		chromedp.Click(chromedp.CSS(`.request.approval button[data-decision="once"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.tool.ok pre.output`)),
		chromedp.WaitVisible(chromedp.CSS(`.request.approval.answered`)),
		chromedp.WaitVisible(`//div[contains(@class, "msg assistant") and contains(., "Ran it.")]`),
	)
	output := get(chromedp.Text(chromedp.CSS(`.tool.ok pre.output`)))
	outcome := get(chromedp.Text(chromedp.CSS(`.request.approval .outcome`)))
	if !strings.Contains(output, "ran-by-shell") || outcome != "approved once" {
		t.Errorf("tool output %q, approval outcome %q", output, outcome)
	}

	start := time.Now()
	do("cancelling",
		chromedp.SendKeys(chromedp.CSS("#message"), "count slowly"),
		chromedp.Click(chromedp.CSS("#send")),
		chromedp.WaitVisible(`//div[contains(@class, "msg assistant") and contains(., "one two")]`),
		chromedp.WaitEnabled(chromedp.CSS("#cancel")),
		chromedp.Click(chromedp.CSS("#cancel")),
		chromedp.WaitVisible(noteWith("turn ended: cancelled")),
		chromedp.WaitVisible(chromedp.CSS("#cancel:disabled")),
	)
	if d := time.Since(start); d > 25*time.Second {
		t.Errorf("the cancelled turn took %s: it ran to its end", d)
	}
}
