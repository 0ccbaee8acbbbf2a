// The dashboard's only script: copy buttons, Try it's options that apply to some formats only, and
// a monitor's page reloading itself while a run is in progress.
// Every page works without it; the CSP allows no other script. Confirmations are pages of their
// own and the usage chart is SVG from the server.
'use strict';

document.addEventListener('click', async (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null;
  if (!button) return;
  const source = document.getElementById(button.getAttribute('data-copy'));
  const status = document.getElementById('copy-status');
  if (!source) return;
  try {
    await navigator.clipboard.writeText(source.value);
    if (status) status.textContent = 'Copied to the clipboard.';
  } catch {
    // Clipboard access can be refused (no secure context, no permission): select it for Ctrl+C.
    source.select();
    if (status) status.textContent = 'Selected: press Ctrl+C (or Cmd+C) to copy.';
  }
});

// A control marked data-enabled-by applies only to some values of another control (imageQuality to
// jpeg and webp): disabled otherwise, so that it is not sent. Without this script the server
// answers such a request with a 400 shown next to the field.
function syncDependentControls() {
  for (const control of document.querySelectorAll('[data-enabled-by]')) {
    const source = document.getElementById(control.getAttribute('data-enabled-by'));
    if (source) control.disabled = !control.getAttribute('data-enabled-for').split(' ').includes(source.value);
  }
}
document.addEventListener('change', syncDependentControls);
syncDependentControls();

// A page that shows work in progress (a monitor's run queued or running) carries data-reload-seconds:
// it follows its "Reload now" link (the page without the notice of the post that started the work)
// until the work is done, when the page no longer carries it. Without this script the link does the same.
const reloading = document.querySelector('[data-reload-seconds]');
if (reloading) {
  const link = reloading.querySelector('a[href]');
  setTimeout(() => location.replace(link ? link.href : location.href), Number(reloading.getAttribute('data-reload-seconds')) * 1000);
}
