// The play view's pointer input (mouse, pen, touch): a click on a column's last card is a tap
// (once it is clear that no second click follows), a double click a double tap; a face-up card
// (with every card on top of it) or a foundation's top card can be dragged and dropped on a
// column or a foundation, the places it may go lit while it moves (placement help). Auto
// placement makes every click, and a drop anywhere else, a double tap. The server decides each.
import { cardElement, locate } from "../../lib/board.js";
import { el } from "../../lib/ui.js";

const DOUBLE_CLICK_MS = 350;
const DRAG_THRESHOLD = 6;

// `view` is the play view (view.js): its game, table, settings and selection, and its actions.
export class PointerInput {
  constructor(view) {
    this.view = view;
    this.press = null; // the card pressed, until the pointer moves far enough to drag it
    this.drag = null; // the card dragged, its ghost and the places it may go
    this.lastClick = null; // the last click, to tell a double click
    this.pendingTap = null; // a click's tap, waiting to see whether a second click follows
  }

  pointerDown(event) {
    const { view } = this;
    if (event.button !== 0 || !view.game || view.game.status !== "active" || view.locked()) return;
    const node = event.target.closest("[data-card]");
    if (!node || !view.table.contains(node) || node.classList.contains("down")) return;
    const card = node.dataset.card;
    const from = locate(view.game, card);
    if (!from) return;
    event.preventDefault();
    this.press = { card, from, x: event.clientX, y: event.clientY };
  }

  pointerMove(event) {
    const press = this.press;
    if (!press) return;
    if (!this.drag) {
      if (Math.hypot(event.clientX - press.x, event.clientY - press.y) < DRAG_THRESHOLD) return;
      this.startDrag(press);
      if (!this.drag) {
        this.press = null;
        return;
      }
    }
    this.drag.ghost.style.left = `${event.clientX - this.drag.dx}px`;
    this.drag.ghost.style.top = `${event.clientY - this.drag.dy}px`;
  }

  pointerUp(event) {
    const press = this.press;
    if (!press) return;
    this.press = null;
    if (this.drag) {
      this.drop();
      return;
    }
    this.clicked(press.card, press.from);
  }

  cancelPress() {
    const { view } = this;
    this.press = null;
    if (this.drag) {
      this.endDrag();
      view.draw();
    }
  }

  clicked(card, from) {
    const { view } = this;
    if (view.selected) view.select(null);
    const now = performance.now();
    const again = this.lastClick && this.lastClick.card === card
      && now - this.lastClick.time < DOUBLE_CLICK_MS;
    if (view.settings.auto_placement) {
      // every click places the card; the second click of a double click adds nothing
      if (again) {
        this.lastClick = null;
        return;
      }
      this.lastClick = { card, time: now };
      view.doubleTap(card);
      return;
    }
    if (!view.settings.double_click) {
      if (from.place !== "f" && from.last) view.tap(card);
      return;
    }
    if (again) {
      this.cancelTap();
      this.lastClick = null;
      view.doubleTap(card);
      return;
    }
    this.flushTap();
    this.lastClick = { card, time: now };
    if (from.place !== "f" && from.last) {
      // a single click is a tap once it is clear that no second click follows
      const run = () => {
        this.pendingTap = null;
        this.lastClick = null;
        view.tap(card);
      };
      this.pendingTap = { run, timer: setTimeout(run, DOUBLE_CLICK_MS) };
    }
  }

  // A tap still waiting to see whether a second click follows is sent now.
  flushTap() {
    if (!this.pendingTap) return;
    clearTimeout(this.pendingTap.timer);
    this.pendingTap.run();
  }

  cancelTap() {
    if (this.pendingTap) clearTimeout(this.pendingTap.timer);
    this.pendingTap = null;
  }

  startDrag(press) {
    const { view } = this;
    const { card, from } = press;
    if (this.pendingTap && this.lastClick && this.lastClick.card === card) this.cancelTap();
    else this.flushTap();
    this.lastClick = null;
    if (view.selected) view.select(null);
    const node = from.place === "f"
      ? view.table.querySelector(`.foundation[data-card="${card}"] .card`)
      : view.table.querySelector(`.column .card[data-card="${card}"]`);
    if (!node) return;
    const rect = node.getBoundingClientRect();
    const ghost = el("div", { class: "drag-ghost", "aria-hidden": "true" });
    ghost.style.setProperty("--card-w", `${rect.width}px`);
    ghost.style.left = `${rect.left}px`;
    ghost.style.top = `${rect.top}px`;
    from.group.forEach((name, index) => {
      const copy = cardElement(name);
      copy.style.setProperty("--down", "0");
      copy.style.setProperty("--up", String(index));
      ghost.append(copy);
    });
    document.body.append(ghost);
    this.drag = { card, from, ghost, targets: [], dx: press.x - rect.left, dy: press.y - rect.top };
    this.markDrag();
    view.fetchTargets(card).then((targets) => {
      if (!this.drag || this.drag.card !== card) return;
      this.drag.targets = targets;
      this.markDrag();
    });
  }

  // Hides the dragged cards in the table and lights the places they may go.
  markDrag() {
    const { view } = this;
    const { card, from, targets } = this.drag;
    for (const name of from.group) {
      const original = from.place === "f"
        ? view.table.querySelector(`.foundation[data-card="${name}"] .card`)
        : view.table.querySelector(`.column .card[data-card="${name}"]`);
      if (original) original.classList.add("lifted");
    }
    for (const place of targets) {
      const zone = place === "f"
        ? view.table.querySelector(`.foundation[data-suit="${card[1]}"]`)
        : view.table.querySelector(`.column[data-place="${place}"]`);
      if (zone) zone.classList.add("target");
    }
  }

  // The place under the dragged card: the zone its top card overlaps most.
  dropPlace() {
    const { view } = this;
    const base = this.drag.ghost.firstElementChild.getBoundingClientRect();
    let best = null;
    let bestArea = 0;
    for (const zone of view.table.querySelectorAll(".column, .foundation")) {
      const box = zone.getBoundingClientRect();
      const width = Math.min(base.right, box.right) - Math.max(base.left, box.left);
      const height = Math.min(base.bottom, box.bottom) - Math.max(base.top, box.top);
      const area = width > 0 && height > 0 ? width * height : 0;
      if (area > bestArea) {
        bestArea = area;
        best = zone.dataset.place;
      }
    }
    return best;
  }

  drop() {
    const { view } = this;
    const { card, from } = this.drag;
    const place = this.dropPlace();
    this.endDrag();
    this.lastClick = null;
    if (place && place !== from.place) {
      view.draw();
      view.move(card, place);
    } else if (view.settings.auto_placement) {
      view.draw();
      view.doubleTap(card);
    } else {
      view.draw();
    }
  }

  endDrag() {
    const { view } = this;
    if (!this.drag) return;
    this.drag.ghost.remove();
    for (const node of view.table.querySelectorAll(".lifted")) node.classList.remove("lifted");
    for (const zone of view.table.querySelectorAll(".target")) zone.classList.remove("target");
    this.drag = null;
  }
}
