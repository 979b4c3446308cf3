/**
 * The page's only script, inlined: the "Copy table" buttons put a table on the clipboard as
 * tab-separated text (pastes into a spreadsheet as cells). Everything else works without it.
 */
export const REPORT_SCRIPT = `
document.addEventListener('click', function (e) {
  var b = e.target.closest ? e.target.closest('button.copy') : null;
  if (!b) return;
  var t = document.getElementById(b.getAttribute('data-copy'));
  if (!t) return;
  var text = Array.prototype.map.call(t.querySelectorAll('tr'), function (tr) {
    return Array.prototype.map.call(tr.children, function (c) { return c.textContent.trim(); }).join('\\t');
  }).join('\\n');
  var done = function () { b.textContent = 'Copied'; setTimeout(function () { b.textContent = 'Copy table'; }, 1500); };
  if (navigator.clipboard && navigator.clipboard.writeText) {
    navigator.clipboard.writeText(text).then(done, function () { selectTable(t); });
  } else { selectTable(t); }
});
function selectTable(t) {
  var r = document.createRange(); r.selectNode(t);
  var s = window.getSelection(); s.removeAllRanges(); s.addRange(r);
}
`;
