// The page of kosong-host serve: sign in with the token, list the
// sessions, open one live. The token stays in this tab's sessionStorage
// and goes out only as the Authorization header; model and tool text is
// only ever put in the page as text (Markdown.render builds nodes).
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const TOKEN_KEY = "kosong-host-token";
  let token = sessionStorage.getItem(TOKEN_KEY) || "";
  let view = null; // the open session's state

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  class APIError extends Error {
    constructor(status, code, message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  async function api(method, path, body) {
    const opts = { method, headers: { Authorization: "Bearer " + token }, cache: "no-store" };
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    const r = await fetch(path, opts);
    let data = null;
    try {
      data = await r.json();
    } catch (_) {
      data = null;
    }
    if (!r.ok) {
      const e = data && data.error ? data.error : { code: "http", message: r.status + " " + r.statusText };
      if (r.status === 401) signOut(e.message);
      throw new APIError(r.status, e.code, e.message);
    }
    return data;
  }

  const sessionPath = (id, rest) => "/v1/sessions/" + encodeURIComponent(id) + (rest ? "/" + rest : "");

  function show(name) {
    for (const v of ["signin", "list", "chat"]) $(v).hidden = v !== name;
    $("signout").hidden = name === "signin";
    $("back").hidden = name !== "chat";
  }

  // --- sign in ---

  function signOut(message) {
    token = "";
    sessionStorage.removeItem(TOKEN_KEY);
    closeView();
    $("signin-error").textContent = message || "";
    show("signin");
  }

  $("signin-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    token = $("token").value.trim();
    $("token").value = "";
    $("signin-error").textContent = "";
    try {
      await api("GET", "/v1/sessions");
    } catch (e) {
      if (e.status !== 401) signOut(e.message);
      return;
    }
    sessionStorage.setItem(TOKEN_KEY, token);
    route();
  });
  $("signout").addEventListener("click", () => signOut(""));
  $("back").addEventListener("click", () => {
    location.hash = "";
  });

  // --- the session list ---

  async function showList() {
    closeView();
    show("list");
    $("list-error").textContent = "";
    const body = $("sessions");
    try {
      const data = await api("GET", "/v1/sessions");
      body.replaceChildren();
      for (const s of data.sessions || []) {
        const tr = el("tr");
        tr.dataset.id = s.id;
        tr.appendChild(el("td", "id", s.id));
        tr.appendChild(el("td", "", s.cwd));
        tr.appendChild(el("td", "", s.agent || ""));
        tr.appendChild(el("td", "", s.status + (s.interrupted ? " (interrupted)" : "")));
        tr.appendChild(el("td", "", (s.pending || []).length ? (s.pending || []).length + " waiting" : ""));
        tr.addEventListener("click", () => {
          location.hash = "#/s/" + encodeURIComponent(s.id);
        });
        body.appendChild(tr);
      }
      if (!body.children.length) {
        const tr = el("tr");
        const td = el("td", "", "No sessions yet.");
        td.colSpan = 5;
        tr.appendChild(td);
        body.appendChild(tr);
      }
    } catch (e) {
      $("list-error").textContent = e.message;
    }
  }

  $("new-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    $("list-error").textContent = "";
    try {
      const s = await api("POST", "/v1/sessions", { cwd: $("new-cwd").value.trim() });
      location.hash = "#/s/" + encodeURIComponent(s.id);
    } catch (e) {
      $("list-error").textContent = e.message;
    }
  });

  // --- one session ---

  function closeView() {
    if (view) {
      view.closed = true;
      view.abort.abort();
      view = null;
    }
  }

  async function openSession(id) {
    closeView();
    show("chat");
    $("chat-title").textContent = id;
    $("chat-status").textContent = "";
    $("chat-error").textContent = "";
    $("send").disabled = false;
    $("transcript").replaceChildren();
    const v = {
      id, last: 0, closed: false, abort: new AbortController(), running: false,
      assistant: null, reasoning: null, tools: new Map(), requests: new Map(),
    };
    view = v;
    try {
      const info = await api("GET", sessionPath(id));
      if (v !== view) return;
      $("chat-title").textContent = info.id + " · " + info.cwd;
      setRunning(v, info.status === "running");
      setStatus(info.status);
    } catch (e) {
      $("chat-error").textContent = e.message;
      return;
    }
    stream(v);
  }

  function setStatus(text) {
    $("chat-status").textContent = text;
  }

  function setRunning(v, running) {
    v.running = running;
    $("cancel").disabled = !running;
    setStatus(running ? "running" : "idle");
  }

  // stream reads the session's events, reconnecting from the last one
  // read (Last-Event-ID) when the connection drops.
  async function stream(v) {
    while (!v.closed) {
      try {
        const r = await fetch(sessionPath(v.id, "events"), {
          headers: { Authorization: "Bearer " + token, Accept: "text/event-stream", "Last-Event-ID": String(v.last) },
          signal: v.abort.signal, cache: "no-store",
        });
        if (!r.ok) {
          let msg = r.status + " " + r.statusText;
          try {
            msg = (await r.json()).error.message;
          } catch (_) { /* not JSON */ }
          if (r.status === 401) return signOut(msg);
          if (r.status === 404 || r.status === 410) {
            $("chat-error").textContent = msg;
            return;
          }
          throw new Error(msg);
        }
        const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value.replace(/\r\n?/g, "\n");
          let k;
          while ((k = buf.indexOf("\n\n")) >= 0) {
            const block = buf.slice(0, k);
            buf = buf.slice(k + 2);
            readBlock(v, block);
          }
        }
        if (v.ended) return;
      } catch (e) {
        if (v.closed) return;
        $("chat-error").textContent = "event stream: " + e.message + " (reconnecting)";
      }
      await new Promise((res) => setTimeout(res, 1000));
    }
  }

  function readBlock(v, block) {
    let id = null;
    const data = [];
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) continue;
      const i = line.indexOf(":");
      const field = i < 0 ? line : line.slice(0, i);
      const value = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
      if (field === "id") id = Number(value);
      else if (field === "data") data.push(value);
    }
    if (!data.length) return;
    let ev;
    try {
      ev = JSON.parse(data.join("\n"));
    } catch (_) {
      return;
    }
    if (id !== null && !Number.isNaN(id)) v.last = id;
    $("chat-error").textContent = "";
    if (v === view) handle(v, ev);
  }

  const transcript = () => $("transcript");

  function add(node) {
    const t = transcript();
    const atEnd = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
    t.appendChild(node);
    if (atEnd) node.scrollIntoView({ block: "end" });
    return node;
  }

  function note(text, cls) {
    return add(el("div", "note" + (cls ? " " + cls : ""), text));
  }

  function endText(v) {
    v.assistant = null;
    v.reasoning = null;
  }

  function handle(v, ev) {
    switch (ev.type) {
      case "turn_start":
        endText(v);
        add(el("div", "msg user", ev.text));
        setRunning(v, true);
        break;
      case "text": {
        v.reasoning = null;
        if (!v.assistant) {
          v.assistant = { node: add(el("div", "msg assistant")), text: "" };
        }
        v.assistant.text += ev.text;
        v.assistant.node.replaceChildren(Markdown.render(v.assistant.text));
        break;
      }
      case "reasoning":
        if (!v.reasoning) v.reasoning = add(el("div", "msg reasoning"));
        v.reasoning.textContent += ev.text;
        break;
      case "tool_call":
        endText(v);
        toolCall(v, ev);
        break;
      case "tool_result":
        toolResult(v, ev);
        break;
      case "tool_progress": {
        const t = v.tools.get(ev.id);
        if (t) t.state.textContent = ev.message || (ev.total ? ev.progress + "/" + ev.total : String(ev.progress));
        break;
      }
      case "approval_request":
        endText(v);
        approvalRequest(v, ev);
        break;
      case "question_request":
        endText(v);
        questionRequest(v, ev);
        break;
      case "request_answered":
        answered(v, ev.request_id, answeredText(ev));
        break;
      case "approval":
        if (ev.answer !== "user") {
          note((ev.approved ? "approved" : "rejected") + " (" + ev.answer + "): " + ev.tool + " " + ev.action);
        }
        break;
      case "retry":
        note("the model request failed (" + ev.error + "); retrying, attempt " + ev.attempt + " of " + ev.max_attempts);
        break;
      case "compaction":
        note(ev.error ? "compaction failed: " + ev.error : "history compacted: " + ev.summarised + " messages summarised");
        break;
      case "interrupted":
        endText(v);
        note("interrupted");
        break;
      case "error":
        endText(v);
        note("error: " + ev.error, "error");
        break;
      case "turn_end":
        endText(v);
        setRunning(v, false);
        note("turn ended: " + ev.reason + (ev.usage ? " · " + ((ev.usage.input_tokens || 0) + (ev.usage.output_tokens || 0)) + " tokens" : ""));
        break;
      case "queued":
        note("queued for after the running turn: " + ev.text);
        break;
      case "steer":
        note("sent into the running turn: " + ev.text);
        break;
      case "steered":
        for (const t of ev.texts || []) add(el("div", "msg user", t));
        break;
      case "cancel":
        note("cancel requested" + (ev.dropped ? "; " + ev.dropped + " queued messages dropped" : ""));
        break;
      case "plan_mode":
        note(ev.on ? "plan mode on" : "plan mode off");
        break;
      case "session_closed":
        v.ended = true;
        setRunning(v, false);
        setStatus("closed (" + ev.reason + ")");
        $("send").disabled = true;
        note("the session was closed: " + ev.reason, "error");
        break;
      case "events_lost":
        note("events " + (ev.after + 1) + " to " + (ev.oldest - 1) + " are no longer held by the server");
        break;
      default:
        break;
    }
  }

  // --- tool calls and diffs ---

  function parseJSON(s) {
    try {
      return JSON.parse(s);
    } catch (_) {
      return null;
    }
  }

  function summary(args) {
    if (!args || typeof args !== "object") return "";
    for (const k of ["command", "path", "pattern", "url", "query", "subagent"]) {
      if (typeof args[k] === "string" && args[k]) return args[k].replace(/\s+/g, " ").slice(0, 120);
    }
    return "";
  }

  function toolCall(v, ev) {
    const box = el("div", "tool running");
    box.dataset.id = ev.id;
    const head = el("div", "head");
    const args = parseJSON(ev.arguments);
    head.appendChild(el("span", "name", ev.name));
    const sum = summary(args);
    if (sum) head.appendChild(el("span", "arg", " " + sum));
    const state = el("span", "state", "running");
    head.appendChild(state);
    box.appendChild(head);
    const d = argsDiff(ev.name, args);
    if (d) box.appendChild(d);
    v.tools.set(ev.id, { box, state });
    add(box);
  }

  function toolResult(v, ev) {
    let t = v.tools.get(ev.id);
    if (!t) {
      toolCall(v, { id: ev.id, name: ev.name, arguments: "" });
      t = v.tools.get(ev.id);
    }
    t.box.className = "tool " + (ev.status || (ev.is_error ? "error" : "ok"));
    let state = ev.status || "";
    if (ev.brief) state += ": " + ev.brief;
    if (ev.cancelled) state += " (cancelled)";
    t.state.textContent = state;
    const text = ev.output || ev.message || "";
    if (text) t.box.appendChild(el("pre", "output", text));
    if (ev.feedback) t.box.appendChild(el("div", "note", "feedback: " + ev.feedback));
  }

  // argsDiff shows the change of a file tool's arguments.
  function argsDiff(name, args) {
    if (!args || typeof args.path !== "string") return null;
    if (name === "StrReplaceFile" && args.edit) {
      const edits = Array.isArray(args.edit) ? args.edit : [args.edit];
      const box = el("div", "diff");
      box.appendChild(el("div", "path", args.path));
      for (const e of edits) {
        if (e && typeof e.old === "string" && typeof e.new === "string") diffLines(box, e.old, e.new);
      }
      return box;
    }
    if (name === "WriteFile" && typeof args.content === "string") {
      const box = el("div", "diff");
      box.appendChild(el("div", "path", args.path + (args.mode === "append" ? " (append)" : "")));
      diffLines(box, "", args.content);
      return box;
    }
    return null;
  }

  // diffLines appends a line diff of a to b (longest common subsequence;
  // beyond 400 lines a side, the old lines then the new).
  function diffLines(box, a, b) {
    const x = a === "" ? [] : a.replace(/\n$/, "").split("\n");
    const y = b === "" ? [] : b.replace(/\n$/, "").split("\n");
    const line = (cls, sign, text) => box.appendChild(el("div", cls, sign + " " + text));
    if (x.length > 400 || y.length > 400) {
      x.forEach((l) => line("del", "-", l));
      y.forEach((l) => line("add", "+", l));
      return;
    }
    const n = x.length;
    const m = y.length;
    const L = Array.from({ length: n + 1 }, () => new Array(m + 1).fill(0));
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        L[i][j] = x[i] === y[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && x[i] === y[j]) {
        line("same", " ", x[i]);
        i++;
        j++;
      } else if (j < m && (i === n || L[i][j + 1] >= L[i + 1][j])) {
        line("add", "+", y[j++]);
      } else {
        line("del", "-", x[i++]);
      }
    }
  }

  function displayBlocks(box, display) {
    for (const d of display || []) {
      const data = d.data;
      if (d.kind === "diff" && data && typeof data === "object") {
        const dbox = el("div", "diff");
        if (data.path) dbox.appendChild(el("div", "path", data.path));
        diffLines(dbox, data.old_text || "", data.new_text || "");
        if (data.note) dbox.appendChild(el("div", "note", data.note));
        box.appendChild(dbox);
      } else if (d.kind === "brief" && typeof data === "string") {
        box.appendChild(el("div", "", data));
      } else if (typeof data === "string") {
        box.appendChild(el("pre", "", data));
      } else if (data && typeof data === "object" && typeof data.command === "string") {
        box.appendChild(el("pre", "", data.command));
      }
    }
  }

  // --- approvals and questions ---

  function answeredText(ev) {
    if (ev.kind === "question") return ev.dismissed ? "dismissed" : "answered";
    switch (ev.decision) {
      case "once": return "approved once";
      case "session": return "approved for this session";
      case "cancelled": return "withdrawn: the turn ended";
      default: return "rejected" + (ev.feedback ? ": " + ev.feedback : "");
    }
  }

  function answered(v, id, text) {
    const r = v.requests.get(id);
    if (!r || r.done) return;
    r.done = true;
    r.box.classList.add("answered");
    for (const b of r.box.querySelectorAll("button, input, textarea")) b.disabled = true;
    r.outcome.textContent = text;
  }

  async function post(v, box, path, body) {
    try {
      await api("POST", sessionPath(v.id, path), body);
    } catch (e) {
      const r = v.requests.get(box.dataset.request);
      if (e.status === 409) {
        if (r && !r.done) r.outcome.textContent = "another client answered first";
      } else if (r) {
        r.outcome.textContent = "not sent: " + e.message;
      }
    }
  }

  function approvalRequest(v, ev) {
    const box = el("div", "request approval");
    box.dataset.request = ev.request_id;
    let title = ev.tool + " wants approval to " + ev.action;
    if (ev.plugin) title += " (plugin " + ev.plugin + ")";
    box.appendChild(el("div", "title", title));
    if (ev.description) box.appendChild(el("pre", "description", ev.description));
    displayBlocks(box, ev.display);
    const buttons = el("div", "buttons");
    const feedback = el("input", "feedback");
    feedback.placeholder = "feedback with a rejection (optional)";
    feedback.setAttribute("aria-label", "feedback");
    const choices = [["once", "Approve once"], ["session", "Approve for this session"], ["reject", "Reject"]];
    for (const [decision, label] of choices) {
      const b = el("button", decision === "once" ? "primary" : "", label);
      b.type = "button";
      b.dataset.decision = decision;
      b.addEventListener("click", () => {
        const body = { decision };
        if (decision === "reject" && feedback.value.trim()) body.feedback = feedback.value.trim();
        post(v, box, "approvals/" + encodeURIComponent(ev.request_id), body);
      });
      buttons.appendChild(b);
    }
    buttons.appendChild(feedback);
    box.appendChild(buttons);
    const outcome = el("div", "outcome");
    box.appendChild(outcome);
    v.requests.set(ev.request_id, { box, outcome, done: false });
    add(box);
  }

  function questionRequest(v, ev) {
    const box = el("div", "request question");
    box.dataset.request = ev.request_id;
    const form = el("form");
    const fields = [];
    (ev.questions || []).forEach((q, qi) => {
      const fs = el("fieldset");
      fs.appendChild(el("legend", "", (q.header ? "[" + q.header + "] " : "") + q.question));
      const name = "q" + ev.request_id + "-" + qi;
      const inputs = [];
      (q.options || []).forEach((o, oi) => {
        const label = el("label");
        const input = el("input");
        input.type = q.multi_select ? "checkbox" : "radio";
        input.name = name;
        input.value = o.label;
        input.dataset.option = String(oi);
        label.appendChild(input);
        label.appendChild(document.createTextNode(" " + o.label + (o.description ? " - " + o.description : "")));
        fs.appendChild(label);
        fs.appendChild(el("br"));
        inputs.push(input);
      });
      const other = el("input", "other");
      other.placeholder = "or your own answer";
      other.setAttribute("aria-label", "your own answer");
      fs.appendChild(other);
      fields.push({ q, inputs, other });
      form.appendChild(fs);
    });
    const buttons = el("div", "buttons");
    const submit = el("button", "primary", "Answer");
    submit.type = "submit";
    const dismiss = el("button", "", "Dismiss");
    dismiss.type = "button";
    buttons.appendChild(submit);
    buttons.appendChild(dismiss);
    form.appendChild(buttons);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const answers = {};
      for (const f of fields) {
        const own = f.other.value.trim();
        const picked = f.inputs.filter((i) => i.checked).map((i) => i.value);
        const a = own || picked.join(", ");
        if (a) answers[f.q.question] = a;
      }
      post(v, box, "questions/" + encodeURIComponent(ev.request_id), { answers });
    });
    dismiss.addEventListener("click", () => post(v, box, "questions/" + encodeURIComponent(ev.request_id), { dismissed: true }));
    box.appendChild(form);
    const outcome = el("div", "outcome");
    box.appendChild(outcome);
    v.requests.set(ev.request_id, { box, outcome, done: false });
    add(box);
  }

  // --- the composer ---

  async function send() {
    const v = view;
    const text = $("message").value;
    if (!v || !text.trim()) return;
    $("chat-error").textContent = "";
    try {
      await api("POST", sessionPath(v.id, "messages"), { text });
      $("message").value = "";
    } catch (e) {
      $("chat-error").textContent = e.message;
    }
  }

  $("composer").addEventListener("submit", (ev) => {
    ev.preventDefault();
    send();
  });
  $("message").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      send();
    }
  });
  $("cancel").addEventListener("click", async () => {
    if (!view) return;
    try {
      await api("POST", sessionPath(view.id, "cancel"), {});
    } catch (e) {
      $("chat-error").textContent = e.message;
    }
  });

  // --- routing: #/s/ID opens a session, anything else lists them ---

  function route() {
    if (!token) {
      show("signin");
      return;
    }
    const m = /^#\/s\/(.+)$/.exec(location.hash);
    if (m) openSession(decodeURIComponent(m[1]));
    else showList();
  }

  window.addEventListener("hashchange", route);
  route();
})();
