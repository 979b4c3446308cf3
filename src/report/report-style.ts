/** The page's only stylesheet, inlined: readable from a phone to print, no web fonts. */
export const REPORT_STYLE = `
:root{--fg:#1d2329;--muted:#5f6b76;--line:#d9dee3;--bg:#fff;--panel:#f6f8fa;--accent:#0072B2}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:980px;margin:0 auto;padding:16px}
header h1{font-size:1.5rem;margin:0 0 4px}
header p{margin:2px 0;color:var(--muted)}
nav ul{display:flex;flex-wrap:wrap;gap:6px 14px;list-style:none;padding:0;margin:12px 0}
nav a{color:var(--accent)}
section{border-top:2px solid var(--line);margin-top:24px;padding-top:8px}
h2{font-size:1.25rem;margin:8px 0}
h3{font-size:1.05rem;margin:18px 0 6px}
h4{font-size:.95rem;margin:8px 0 4px}
.note{color:var(--muted);margin:4px 0 8px;font-size:.9rem}
.empty{color:var(--muted);font-style:italic}
.warn{background:#fff4e5;border-left:4px solid #E69F00;padding:6px 10px}
svg.chart{display:block;width:100%;height:auto;max-width:760px;margin:6px 0}
svg text{font-size:12px;fill:var(--fg)}
svg text.axis{fill:var(--muted);font-size:11px}
svg text.value{font-size:11px}
svg text.muted{fill:var(--muted)}
svg .grid{stroke:var(--line);stroke-width:1}
svg .axis-line{stroke:#9aa5b1;stroke-width:1}
svg path.mark{opacity:.9;stroke:#fff;stroke-width:.5}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;list-style:none;padding:0;margin:6px 0;font-size:.85rem}
.swatch{display:inline-block;width:11px;height:11px;margin-right:5px;vertical-align:-1px;border-radius:2px;-webkit-print-color-adjust:exact;print-color-adjust:exact}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:12px}
.table-box{display:flex;flex-direction:column;margin:6px 0 14px}
.table-scroll{overflow:auto;max-height:420px;border:1px solid var(--line);border-radius:4px}
table{border-collapse:collapse;width:100%;font-size:.85rem;font-variant-numeric:tabular-nums}
caption{text-align:left;padding:6px 8px;color:var(--muted);caption-side:top}
th,td{padding:4px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top;white-space:nowrap}
td.wrap{white-space:normal;min-width:16em}
th{background:var(--panel);position:sticky;top:0}
td.num,th.num{text-align:right;white-space:nowrap}
button.copy{align-self:flex-end;margin-bottom:4px;font:inherit;font-size:.8rem;padding:2px 8px;border:1px solid var(--line);border-radius:4px;background:#fff;cursor:pointer}
.period-picker>input{position:absolute;opacity:0}
.period-picker>label{display:inline-block;padding:4px 12px;border:1px solid var(--line);border-radius:14px;margin:0 4px 6px 0;cursor:pointer}
.period-picker>input:checked+label{background:var(--accent);border-color:var(--accent);color:#fff}
.period-picker>input:focus-visible+label{outline:2px solid var(--accent);outline-offset:2px}
.panel{display:none}
#gp-month:checked~.panel-month,#gp-week:checked~.panel-week,#gp-day:checked~.panel-day{display:block}
@media (max-width:600px){main{padding:10px}.pair{grid-template-columns:1fr}body{font-size:14px}table{font-size:.8rem}th,td{padding:3px 5px}
  svg text,svg text.value{font-size:14px}svg text.axis{font-size:13px}}
@media print{
  body{font-size:10.5pt}main{max-width:none;padding:0}nav,button.copy,.period-picker>label{display:none}
  .period-picker>input:checked+label{display:inline-block;background:none;color:var(--fg);border:none;padding:0;font-weight:600}
  .table-scroll{max-height:none;overflow:visible;border:none}th{position:static}
  section{break-before:auto}svg.chart,tr,.legend{break-inside:avoid}
  svg.chart{max-width:17cm}
}
`;
