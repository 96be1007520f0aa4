// Run in the docs page (bundled by page.ts): the page's own scripts act on Redocly's panels, which it
// draws when the reader goes to a tag and may draw again at any time. `work` runs now and once after
// each frame in which the page changed, however many changes that frame held.
export function whenRedrawn(work: () => void, watch: MutationObserverInit = { childList: true, subtree: true }): void {
  let queued = false;
  new MutationObserver(() => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      work();
    });
  }).observe(document.body, watch);
  work();
}
