// docevals review: keyboard-first answering. No framework, no network beyond this server.
"use strict";
async function postJson(url, body) {
  // Every write: JSON, the page's CSRF token, same-origin cookies. Returns the reply or {error}.
  const csrf = document.querySelector('meta[name="csrf"]').content;
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "x-docevals-csrf": csrf },
      body: JSON.stringify(body),
      credentials: "same-origin",
    });
    return await response.json();
  } catch (error) {
    return { error: "the server did not answer (" + error + ")" };
  }
}

(function () {
  // The approver's view: j/k pick a document, A (or the button) approves it.
  const table = document.querySelector("table.chain");
  if (!table) return;
  const rows = Array.from(table.querySelectorAll("tr.chain-row"));
  let current = 0;
  function select(index) {
    if (!rows.length) return;
    current = Math.max(0, Math.min(index, rows.length - 1));
    rows.forEach((row, i) => row.classList.toggle("current", i === current));
  }
  async function approve(row) {
    const outcome = row.querySelector(".outcome");
    outcome.textContent = "approving…";
    const reply = await postJson("/api/approve", { document: row.dataset.document });
    if (reply.ok) {
      outcome.textContent = reply.message;
      outcome.className = "outcome done";
      window.setTimeout(() => window.location.reload(), 600);
    } else {
      outcome.textContent = "refused: " + reply.error;
      outcome.className = "outcome bad";
    }
  }
  rows.forEach((row, i) => {
    const button = row.querySelector("button.approve");
    if (button) button.addEventListener("click", () => { select(i); approve(row); });
  });
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "j" || event.key === "ArrowDown") select(current + 1);
    else if (event.key === "k" || event.key === "ArrowUp") select(current - 1);
    else if (event.key === "A" && rows[current] && rows[current].querySelector("button.approve")) approve(rows[current]);
    else return;
    event.preventDefault();
  });
  select(0);
})();

(function () {
  const review = document.getElementById("review");
  if (!review) return;
  const documentId = review.dataset.document;
  const readOnly = review.dataset.readonly === "yes";
  const signButton = document.getElementById("sign");
  const adjudicating = review.dataset.adjudicating === "yes";
  const csrf = document.querySelector('meta[name="csrf"]').content;
  const status = document.getElementById("status");
  const editor = document.getElementById("editor");
  const editorValue = document.getElementById("editor-value");
  const editorReason = document.getElementById("editor-reason");
  const editorLabel = document.getElementById("editor-label");
  const progress = document.getElementById("doc-progress");
  let current = 0;
  let pending = null; // {action, value, text} waiting for the editor (value or reason)
  const rows = () => Array.from(document.querySelectorAll("tr.field"));
  const path = (row) => row.dataset.path;
  const encodedId = documentId.split("/").map(encodeURIComponent).join("/");

  function say(text, bad) {
    status.textContent = text;
    status.className = bad ? "bad" : "";
  }

  function select(index) {
    const all = rows();
    if (!all.length) return;
    current = Math.max(0, Math.min(index, all.length - 1));
    all.forEach((row, i) => row.classList.toggle("current", i === current));
    all[current].scrollIntoView({ block: "nearest" });
    showMarks();
  }

  function nextOpen(from) {
    const all = rows();
    for (let i = from + 1; i < all.length; i++) if (!all[i].classList.contains("answered")) return i;
    return Math.min(from + 1, all.length - 1);
  }

  async function send(action, value, text, reason) {
    const row = rows()[current];
    const body = { document: documentId, path: path(row), action: action };
    if (value !== undefined) body.value = value;
    if (text !== undefined) body.text = text;
    if (reason) body.reason = reason;
    let reply;
    try {
      const response = await fetch("/api/answer", {
        method: "POST",
        headers: { "content-type": "application/json", "x-docevals-csrf": csrf },
        body: JSON.stringify(body),
        credentials: "same-origin",
      });
      reply = await response.json();
    } catch (error) {
      say("not saved: the server did not answer (" + error + ")", true);
      return;
    }
    if (!reply.ok) {
      say("not saved: " + reply.error, true);
      return;
    }
    const template = document.createElement("tbody");
    template.innerHTML = reply.row_html.trim();
    row.replaceWith(template.firstElementChild);
    progress.textContent = reply.answered + " / " + reply.fields + " answered";
    say("saved " + body.path + " (" + action + ")");
    select(nextOpen(current));
  }

  function ask(action, value, prompt) {
    // Opens the editor: a value to type (edit) and/or, for adjudicators, a reason.
    pending = { action: action, value: value };
    const typing = action === "set" && value === undefined;
    editor.hidden = false;
    editorValue.parentElement.hidden = !typing;
    editorLabel.textContent = prompt || "value";
    if (typing) {
      editorValue.value = rows()[current].dataset.edit || "";
      editorValue.focus();
      editorValue.select();
    } else {
      editorReason.value = "";
      editorReason.focus();
    }
  }

  function answer(action, value) {
    if (adjudicating) ask(action, value, "value");
    else if (action === "set" && value === undefined) ask(action, undefined, "value");
    else send(action, value);
  }

  function closeEditor() {
    editor.hidden = true;
    pending = null;
    document.activeElement.blur();
  }

  editor.addEventListener("keydown", (event) => {
    // The editor's keys are its own: without this, the Enter that saves a typed value
    // would reach the page's handler too and also "accept" the same field.
    event.stopPropagation();
    if (event.key === "Escape") {
      event.preventDefault();
      closeEditor();
    } else if (event.key === "Enter") {
      event.preventDefault();
      if (adjudicating && document.activeElement === editorValue) {
        editorReason.focus();
        return;
      }
      const typed = pending.action === "set" && pending.value === undefined;
      const reason = adjudicating ? editorReason.value.trim() : undefined;
      if (adjudicating && !reason) {
        say("an adjudicator's answer needs a reason", true);
        editorReason.focus();
        return;
      }
      const chosen = pending;
      closeEditor();
      send(chosen.action, chosen.value, typed ? editorValue.value : undefined, reason);
    }
  });

  async function sign() {
    say("signing…");
    const reply = await postJson("/api/sign", { document: documentId });
    if (reply.ok) say(reply.message);
    else say("not signed: " + reply.error, true);
  }
  if (signButton) signButton.addEventListener("click", sign);

  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || !editor.hidden || event.ctrlKey || event.metaKey || event.altKey) return;
    const row = rows()[current];
    const key = event.key;
    if (readOnly && !["j", "k", "ArrowDown", "ArrowUp", "n", "[", "]", "+", "=", "-"].includes(key)) return;
    if (key === "S" && signButton) sign();
    else if (key === "Enter" || key === "a") {
      if (row.dataset.hasProposal !== "yes") say("no proposal to accept: pick 1-9 or edit with e", true);
      else answer("accept");
    } else if (/^[1-9]$/.test(key)) {
      const choice = JSON.parse(row.dataset.choices)[Number(key) - 1];
      if (!choice) return say("no value " + key + " to pick", true);
      answer(choice.action, choice.action === "set" ? choice.value : undefined);
    } else if (key === "e") answer("set");
    else if (key === "x") answer("absent");
    else if (key === "u") answer("unreadable");
    else if (key === "j" || key === "ArrowDown") select(current + 1);
    else if (key === "k" || key === "ArrowUp") select(current - 1);
    else if (key === "n") window.location.href = document.getElementById("next-doc").href;
    else if (key === "]" || key === "[") turn(key === "]" ? 1 : -1);
    else if (key === "+" || key === "=" || key === "-") zoom(key === "-" ? -1 : 1);
    else return;
    event.preventDefault();
  });

  // --- pages and highlights -------------------------------------------------------
  const viewers = Array.from(document.querySelectorAll(".source"));
  const boxes = {};
  viewers.forEach((viewer) => {
    viewer.page = 1;
    viewer.zooms = JSON.parse(viewer.querySelector(".zoom").dataset.zooms);
    viewer.zoom = 1.5;
    const source = viewer.dataset.source;
    fetch("/boxes/" + encodedId + "?source=" + encodeURIComponent(source), { credentials: "same-origin" })
      .then((r) => r.json())
      .then((data) => { boxes[source] = data.boxes || {}; showMarks(); })
      .catch(() => {});
    draw(viewer);
  });

  function draw(viewer) {
    const image = viewer.querySelector("img.page");
    image.src = "/page/" + encodedId + "?source=" + encodeURIComponent(viewer.dataset.source) +
      "&page=" + viewer.page + "&zoom=" + viewer.zoom;
    viewer.querySelector(".page-number").textContent = viewer.page;
    viewer.querySelector(".zoom").textContent = viewer.zoom;
    showMarks();
  }

  function turn(step) {
    viewers.forEach((viewer) => {
      const next = viewer.page + step;
      if (next >= 1 && next <= Number(viewer.dataset.pages)) { viewer.page = next; draw(viewer); }
    });
  }

  function zoom(step) {
    viewers.forEach((viewer) => {
      const index = viewer.zooms.indexOf(viewer.zoom) + step;
      if (index >= 0 && index < viewer.zooms.length) { viewer.zoom = viewer.zooms[index]; draw(viewer); }
    });
  }

  function showMarks() {
    const row = rows()[current];
    viewers.forEach((viewer) => {
      const layer = viewer.querySelector(".marks");
      layer.replaceChildren();
      const found = (boxes[viewer.dataset.source] || {})[row ? path(row) : ""] || [];
      if (found.length && !found.some((b) => b[0] + 1 === viewer.page)) {
        viewer.page = found[0][0] + 1;
        draw(viewer);
        return;
      }
      found.filter((b) => b[0] + 1 === viewer.page).forEach((b) => {
        const mark = document.createElement("div");
        mark.className = "mark " + b[5];
        mark.style.left = b[1] * viewer.zoom + "px";
        mark.style.top = b[2] * viewer.zoom + "px";
        mark.style.width = (b[3] - b[1]) * viewer.zoom + "px";
        mark.style.height = (b[4] - b[2]) * viewer.zoom + "px";
        layer.appendChild(mark);
      });
    });
  }

  const all = rows();
  const firstOpen = all.findIndex((row) => !row.classList.contains("answered"));
  select(firstOpen < 0 ? 0 : firstOpen);
})();
