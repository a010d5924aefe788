// The Chat page: sends the owner's message and shows its answer as it streams (one JSON event a
// line), replaced by the final text once, with a line while it waits for an approval; Stop ends
// the run. Proactive messages (a background task's result) arrive while the page is open.
"use strict";
(() => {
  const { post, toast, csrf } = window.hearth;
  const log = document.getElementById("chat-log");
  const form = document.getElementById("chat-form");
  const input = document.getElementById("chat-text");
  const files = document.getElementById("chat-files");
  const stop = document.getElementById("chat-stop");
  const send = document.getElementById("chat-send");
  const scroll = () => (log.scrollTop = log.scrollHeight);
  scroll();

  function bubble(role, text, kind) {
    document.getElementById("chat-empty")?.remove();
    const el = document.createElement("div");
    el.className = `msg ${role}${kind ? ` ${kind}` : ""}`;
    const who = document.createElement("div");
    who.className = "who";
    who.textContent = role === "user" ? "You" : "Hearth";
    const body = document.createElement("div");
    body.className = "text";
    body.textContent = text;
    el.append(who, body);
    log.append(el);
    scroll();
    return body;
  }

  const readFile = (file) =>
    new Promise((resolve, reject) => {
      const r = new FileReader();
      r.onload = () => resolve({ name: file.name, data: String(r.result).split(",", 2)[1] ?? "" });
      r.onerror = () => reject(r.error);
      r.readAsDataURL(file);
    });

  async function submit() {
    const text = input.value;
    const chosen = [...(files.files ?? [])];
    if (!text.trim() && chosen.length === 0) return;
    const attachments = await Promise.all(chosen.map(readFile));
    bubble("user", text + (chosen.length ? `\n📎 ${chosen.map((f) => f.name).join(", ")}` : ""));
    input.value = "";
    files.value = "";
    const answer = bubble("assistant", "…");
    answer.parentElement.setAttribute("aria-busy", "true");
    send.disabled = true;
    stop.disabled = false;
    let shown = "";
    const res = await fetch("/api/chat/send", { method: "POST", headers: { "content-type": "application/json", "x-csrf-token": csrf }, body: JSON.stringify({ text, files: attachments }) });
    if (!res.ok || !res.body) {
      const data = await res.json().catch(() => ({}));
      answer.textContent = data.error || "The message was not sent.";
      answer.parentElement.classList.add("error");
    } else {
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let nl;
        while ((nl = buf.indexOf("\n")) >= 0) {
          const e = JSON.parse(buf.slice(0, nl));
          buf = buf.slice(nl + 1);
          if (e.type === "text_delta") shown += e.text;
          else if (e.type === "text_reset") shown = e.text;
          else if (e.type === "final") shown = e.text;
          else if (e.type === "failed") shown = e.message;
          else if (e.type === "note") bubble("assistant", e.text);
          else if (e.type === "tool_start") answer.dataset.tool = `${e.name}: ${e.summary}`;
          else if (e.type === "waiting") showWaiting(answer.parentElement, e.for);
          answer.textContent = shown || "…";
          if (e.type === "final" || e.type === "failed") answer.parentElement.dataset.done = e.type;
          scroll();
        }
      }
    }
    showWaiting(answer.parentElement, null);
    answer.parentElement.removeAttribute("aria-busy");
    send.disabled = false;
    stop.disabled = true;
    input.focus();
  }

  /** The sign under an answer whose run waits for the owner's approval; `what` null removes it. */
  function showWaiting(msg, what) {
    msg.querySelector(".waiting")?.remove();
    if (!what) return;
    const line = document.createElement("div");
    line.className = "waiting";
    line.append(`Waiting for your approval: ${what} — answer it in your chat or on `);
    const link = document.createElement("a");
    link.href = "/approvals";
    link.textContent = "Approvals";
    line.append(link, ".");
    msg.append(line);
    scroll();
  }

  // A background task's result, a job's answer: shown as they come while the page is open.
  const notices = new EventSource("/api/chat/notices");
  notices.onmessage = (ev) => bubble("assistant", JSON.parse(ev.data), "notice");

  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    void submit().catch((err) => toast(String(err), true));
  });
  input.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) {
      ev.preventDefault();
      form.requestSubmit();
    }
  });
  stop.addEventListener("click", async () => {
    const { data } = await post("/api/chat/stop", {});
    if (!data.ok) toast(data.error || "Could not stop.", true);
  });
})();
