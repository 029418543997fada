// Small shared pieces of the page: element building, the status line, dialogs.
import { t } from "./i18n.js";

export function el(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") element.className = value;
    else if (name === "text") element.textContent = value;
    else if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined && child !== false) element.append(child);
  }
  return element;
}

let toastTimer = null;

// A message in the status line (read out by screen readers). kind: "info" | "error".
export function toast(message, kind = "info", ms = 4000) {
  const box = document.getElementById("toast");
  box.textContent = message;
  box.dataset.kind = kind;
  box.classList.add("shown");
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => box.classList.remove("shown"), ms);
}

// A modal dialog; resolves with the value of the button pressed (null when dismissed).
// `body` is a node or a list of nodes; `buttons` is a list of {label, value, primary}.
export function dialog({ title, body = [], buttons = [{ label: t("ok"), value: true }], id = null }) {
  return new Promise((resolve) => {
    const box = el("dialog", { class: "dialog", id, "aria-labelledby": "dialog-title" });
    const actions = el("div", { class: "actions" });
    for (const button of buttons) {
      actions.append(el("button", {
        type: "button",
        class: button.primary ? "primary" : null,
        "data-value": String(button.value),
        text: button.label,
        onclick: () => box.close(String(button.value)),
      }));
    }
    box.append(el("h2", { id: "dialog-title", text: title }), ...[body].flat(), actions);
    box.addEventListener("close", () => {
      const chosen = buttons.find((button) => String(button.value) === box.returnValue);
      box.remove();
      resolve(chosen ? chosen.value : null);
    });
    document.body.append(box);
    box.showModal();
  });
}

// The message of a refused form: its first field's reason when the server names one (a 422 with
// `errors`), else the problem's own text.
export function fieldProblemText(error) {
  const errors = error && error.problem && error.problem.errors;
  return errors && errors.length ? errors[0].message : problemText(error);
}

export function problemText(error) {
  return error && error.problem ? error.problem.detail || error.problem.title : String(error);
}
