// Broadcast and backward on a static page: mount the widget on every
// <div class="mg-static-widget" data-shape-a data-shape-b data-op> with the static mode's model
// (static_mode.js) and the widget's own drawing code (broadcast_backward.js, loaded as a classic
// script that sets window.MinigradBB). No kernel and no request: everything is on the page.
(function () {
  "use strict";
  function mount(box) {
    if (box.dataset.mounted) return;
    box.dataset.mounted = "1";
    const model = window.MinigradStatic.createModel({
      shapeA: box.dataset.shapeA || "3,1", shapeB: box.dataset.shapeB || "1,4",
      op: box.dataset.op || "+"});
    box.replaceChildren();
    const root = document.createElement("div");
    box.append(root);
    window.MinigradBB.render({model, el: root});
    box.dataset.ready = "1";
  }
  function mountAll() {
    for (const box of document.querySelectorAll(".mg-static-widget")) {
      try {
        mount(box);
      } catch (error) {  // say so on the page: a blank box would hide the problem
        box.textContent = `The interactive could not start: ${error}`;
        box.dataset.failed = "1";
        throw error;
      }
    }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mountAll);
  else mountAll();
})();
