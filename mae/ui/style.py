"""CSS of the demo (passed to ``launch(css=...)``, where Gradio 6 takes it)."""

from __future__ import annotations

CSS = """
#mae-phone img { object-fit: contain; background: #111; border-radius: 18px; }
#mae-phone { max-width: 420px; margin: 0 auto; }
.mae-timeline { display: flex; flex-direction: column; gap: 10px; font-size: 14px; }
.mae-empty { color: var(--body-text-color-subdued); padding: 12px; }
.mae-step { border: 1px solid var(--border-color-primary); border-radius: 10px; padding: 8px 12px;
  background: var(--background-fill-secondary); }
.mae-step-head { display: flex; align-items: center; gap: 8px; font-weight: 600; margin-bottom: 4px; }
.mae-step-head code { font-weight: 500; }
.mae-time { margin-left: auto; font-weight: 400; color: var(--body-text-color-subdued); font-size: 12px;
  white-space: nowrap; }
.mae-stage { border-left: 3px solid #9ca3af; padding: 2px 0 4px 10px; margin: 6px 0; }
.mae-stage-head { display: flex; gap: 8px; }
.mae-stage-manager { border-color: #6366f1; }
.mae-stage-operator { border-color: #0ea5e9; }
.mae-stage-reflector { border-color: #f59e0b; }
.mae-stage-notetaker { border-color: #10b981; }
.mae-stage-experience { border-color: #a855f7; }
.mae-field { display: grid; grid-template-columns: 92px 1fr; gap: 8px; margin: 2px 0; }
.mae-key { color: var(--body-text-color-subdued); font-size: 12px; padding-top: 1px; }
.mae-val { white-space: pre-wrap; word-break: break-word; }
.mae-badge { display: inline-block; min-width: 22px; text-align: center; border-radius: 6px; padding: 0 6px;
  background: #9ca3af; color: white; }
.mae-outcome-A { background: #16a34a; }
.mae-outcome-B { background: #dc2626; }
.mae-outcome-C { background: #d97706; }
.mae-warn { color: #b45309; margin-top: 4px; }
.mae-note { color: #2563eb; margin-top: 4px; }
.mae-live { color: #2563eb; font-style: italic; margin-top: 4px; }
.mae-progress { display: flex; flex-direction: column; gap: 4px; }
.mae-bar { height: 8px; border-radius: 4px; background: var(--background-fill-secondary); overflow: hidden;
  border: 1px solid var(--border-color-primary); }
.mae-bar > div { height: 100%; background: #6366f1; transition: width .3s; }
.mae-approval-title { font-size: 1.2em; font-weight: 600; margin-bottom: 4px; }
.mae-approval-body > div { margin-top: 6px; }
#mae-approval { border: 2px solid #f59e0b; border-radius: 10px; padding: 8px; }
#mae-shortcut-table th *, #mae-memory-history th *, #mae-runs-table th * { word-break: normal !important;
  overflow-wrap: normal !important; hyphens: none; }
#mae-shortcut-table td *, #mae-memory-history td *, #mae-runs-table td * { word-break: normal !important;
  overflow-wrap: break-word !important; hyphens: none; }
#mae-phone-controls button { min-width: 0; }
#mae-eval-tasks { max-height: 340px; overflow-y: auto; }
"""
