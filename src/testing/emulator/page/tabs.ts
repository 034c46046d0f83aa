// The activity column's two tabs (deliveries, requests), with the arrow keys a tab list takes.
import { byId } from './dom.js';

const tabs = () => document.querySelectorAll<HTMLElement>('[role="tab"]');

function showTab(id: string) {
  for (const tab of tabs()) {
    const on = tab.id === id;
    tab.setAttribute('aria-selected', String(on));
    tab.tabIndex = on ? 0 : -1;
    byId(tab.getAttribute('aria-controls') ?? '').hidden = !on;
  }
}

/** Makes the tabs switch on click and arrow keys; the deliveries tab shows first. */
export function bindTabs() {
  for (const tab of tabs()) {
    tab.addEventListener('click', () => showTab(tab.id));
    tab.addEventListener('keydown', (event) => {
      if (event.key !== 'ArrowLeft' && event.key !== 'ArrowRight') return;
      const other = document.querySelector<HTMLElement>('[role="tab"]:not([aria-selected="true"])');
      if (other) {
        showTab(other.id);
        other.focus();
      }
    });
  }
  showTab('tab-deliveries');
}
