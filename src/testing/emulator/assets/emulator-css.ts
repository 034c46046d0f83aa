// The emulator page's emulator.css, served at /_mock/ui/emulator.css. Browser code is kept as a string
// so it ships inside the package with no build step; it must hold no backtick and no dollar-brace.

/** The page's styles. */
export const EMULATOR_CSS = `:root {
  --bg: #f4f5f7;
  --panel: #ffffff;
  --line: #e3e5ea;
  --text: #1d2330;
  --muted: #6b7280;
  --accent: #4f46e5;
  --accent-soft: #eef0ff;
  --user: #4f46e5;
  --ok: #15803d;
  --ok-soft: #e7f6ec;
  --bad: #b91c1c;
  --bad-soft: #fdecec;
  --warn: #b45309;
  --warn-soft: #fff4e0;
  --radius: 10px;
  --mono: ui-monospace, 'SFMono-Regular', Menlo, Consolas, 'DejaVu Sans Mono', monospace;
  color-scheme: light;
  font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif;
  color: var(--text);
  background: var(--bg);
}
* { box-sizing: border-box; }
body { margin: 0; height: 100vh; display: flex; flex-direction: column; overflow: hidden; }
h1, h2 { margin: 0; }
code, .mono { font-family: var(--mono); font-size: 12.5px; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
[hidden] { display: none !important; }

/* Top bar */
.topbar { display: flex; align-items: center; justify-content: space-between; gap: 16px; padding: 10px 18px; background: #151a2d; color: #f5f6fb; flex-wrap: wrap; }
.brand { display: flex; align-items: center; gap: 8px; }
.logo { color: #a5b4fc; font-size: 18px; }
.brand-name { font-weight: 650; letter-spacing: .2px; }
.brand-tag { color: #a5b4fc; font-weight: 500; }
.connection { margin-left: 10px; font-size: 12px; padding: 2px 8px 2px 20px; border-radius: 99px; background: #262c45; position: relative; }
.connection::before { content: ''; position: absolute; left: 8px; top: 50%; width: 7px; height: 7px; margin-top: -3.5px; border-radius: 50%; background: #fbbf24; }
.connection[data-state='live']::before { background: #4ade80; box-shadow: 0 0 0 3px rgba(74, 222, 128, .2); }
.clock { display: flex; align-items: center; gap: 6px; flex-wrap: wrap; }
.clock-read { display: flex; flex-direction: column; align-items: flex-end; margin-right: 6px; line-height: 1.2; }
.clock-now { font-size: 13px; color: #fff; }
.clock-offset { font-size: 11px; color: #a5b4fc; }
.advance-form { display: flex; gap: 4px; }
.advance-form input { width: 88px; }
.topbar .btn { background: #262c45; color: #f5f6fb; border-color: #363d5c; }
.topbar .btn:hover { background: #323a5a; }
.topbar input { background: #262c45; color: #fff; border-color: #363d5c; }

/* Controls */
.btn { font: inherit; font-weight: 550; border: 1px solid var(--line); background: var(--panel); color: var(--text); border-radius: 8px; padding: 7px 14px; cursor: pointer; }
.btn:hover { background: #f0f1f4; }
.btn:disabled { opacity: .5; cursor: default; }
.btn-small { padding: 4px 10px; font-size: 12.5px; }
.btn-primary { background: var(--accent); border-color: var(--accent); color: #fff; }
.btn-primary:hover { background: #4338ca; }
.btn-quiet { opacity: .8; }
.btn-chip { border-radius: 99px; border-color: #c7cbf8; color: var(--accent); background: var(--accent-soft); padding: 5px 14px; }
.btn-chip:hover { background: #e0e4ff; }
input, select { font: inherit; border: 1px solid var(--line); border-radius: 8px; padding: 6px 9px; background: #fff; color: var(--text); min-width: 0; }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
.topbar :focus-visible { outline-color: #a5b4fc; }

/* Layout */
.layout { flex: 1; display: grid; grid-template-columns: 290px minmax(0, 1fr) 380px; min-height: 0; }
.sidebar, .activity { background: var(--panel); overflow-y: auto; min-height: 0; }
.sidebar { border-right: 1px solid var(--line); padding: 14px 14px 24px; }
.activity { border-left: 1px solid var(--line); display: flex; flex-direction: column; }
.sidebar section + section { margin-top: 18px; }
.sidebar h2 { font-size: 11.5px; text-transform: uppercase; letter-spacing: .08em; color: var(--muted); margin-bottom: 8px; font-weight: 650; }
.entities, .conversations, .requests, .messages { list-style: none; margin: 0; padding: 0; }
.entity { padding: 8px 10px; border: 1px solid var(--line); border-radius: var(--radius); margin-bottom: 6px; }
.entity-line { display: flex; align-items: center; justify-content: space-between; gap: 8px; }
.entity-name { font-weight: 600; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.entity-sub { display: block; color: var(--muted); font-size: 12.5px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.empty { color: var(--muted); font-size: 12.5px; padding: 4px 2px; list-style: none; }
.inline-form { display: flex; gap: 6px; margin-top: 8px; }
.inline-form input { flex: 1; }
.stack-form { margin-top: 10px; padding-top: 10px; border-top: 1px dashed var(--line); display: flex; flex-direction: column; gap: 6px; align-items: stretch; }
.field { display: grid; grid-template-columns: 44px minmax(0, 1fr); align-items: center; gap: 6px; color: var(--muted); font-size: 12.5px; }
.conversation { display: block; width: 100%; text-align: left; font: inherit; color: inherit; background: none; border: 1px solid transparent; border-radius: var(--radius); padding: 8px 10px; cursor: pointer; margin-bottom: 2px; }
.conversation:hover { background: #f6f7f9; }
.conversation.selected { background: var(--accent-soft); border-color: #c7cbf8; }

/* Badges */
.badge { font-size: 11px; font-weight: 600; padding: 1px 8px; border-radius: 99px; background: #eef0f3; color: #4b5563; white-space: nowrap; }
.badge-active, .badge-completed { background: var(--ok-soft); color: var(--ok); }
.badge-pending_webhook, .badge-pending { background: var(--warn-soft); color: var(--warn); }
.badge-expired { background: var(--bad-soft); color: var(--bad); }
.badge-agent { background: var(--accent-soft); color: var(--accent); }
.badge-group { background: #f3e8ff; color: #7e22ce; }
.badge-streaming { background: var(--accent-soft); color: var(--accent); }

/* Chat */
.chat-pane { display: flex; flex-direction: column; min-height: 0; min-width: 0; }
.chat { display: flex; flex-direction: column; flex: 1; min-height: 0; }
.chat-empty { margin: auto; max-width: 520px; padding: 32px; }
.chat-empty h1 { font-size: 22px; margin-bottom: 12px; }
.steps { padding-left: 20px; color: #374151; }
.steps li { margin-bottom: 8px; }
.chat-header { padding: 14px 22px; background: var(--panel); border-bottom: 1px solid var(--line); }
.chat-title-row { display: flex; align-items: center; gap: 10px; }
.chat-title { font-size: 17px; }
.chat-members { color: var(--muted); font-size: 12.5px; margin-top: 2px; }
.member-agent { color: var(--accent); font-weight: 550; }
.messages { flex: 1; overflow-y: auto; padding: 18px 22px; display: flex; flex-direction: column; gap: 14px; }
.messages-empty { text-align: center; color: var(--muted); }
.msg { display: flex; flex-direction: column; max-width: min(620px, 78%); align-self: flex-start; }
.msg.from-user { align-self: flex-end; align-items: flex-end; }
.msg-sender { font-size: 12px; font-weight: 600; color: var(--muted); margin: 0 4px 3px; }
.bubble { background: var(--panel); border: 1px solid var(--line); border-radius: 14px 14px 14px 4px; padding: 9px 13px; box-shadow: 0 1px 2px rgba(16, 24, 40, .04); display: flex; flex-direction: column; gap: 8px; }
.from-user .bubble { background: var(--user); color: #fff; border-color: var(--user); border-radius: 14px 14px 4px 14px; }
.streaming .bubble { border-color: #a5b4fc; box-shadow: 0 0 0 3px var(--accent-soft); }
.part-text { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; }
.caret { display: inline-block; width: 7px; height: 1.05em; margin-left: 2px; vertical-align: text-bottom; background: var(--accent); animation: blink 1s steps(2) infinite; }
@keyframes blink { 50% { opacity: 0; } }
.quick-replies { display: flex; flex-wrap: wrap; gap: 6px; }
.part-file { display: flex; flex-direction: column; gap: 6px; }
.part-image { max-width: 260px; max-height: 200px; border-radius: 8px; border: 1px solid var(--line); }
.file-link { display: flex; align-items: center; gap: 8px; padding: 7px 10px; border-radius: 8px; background: #f6f7f9; border: 1px solid var(--line); color: var(--text); text-decoration: none; }
.file-link:hover { background: #eef0f3; }
.file-name { font-weight: 600; }
.file-size { color: var(--muted); font-size: 12px; }
.part-unknown { margin: 0; color: var(--muted); font-style: italic; }
.deleted .bubble { background: transparent; border: 1px dashed #c4c8d0; box-shadow: none; color: var(--muted); }
.from-user.deleted .bubble { color: var(--muted); }
.tombstone { margin: 0; font-style: italic; }
.fallback { margin: 4px 4px 0; font-size: 12px; color: var(--muted); max-width: 100%; }
.fallback-label { font-weight: 600; margin-right: 6px; text-transform: uppercase; font-size: 10.5px; letter-spacing: .05em; }
.msg-meta { display: flex; gap: 8px; align-items: center; font-size: 11.5px; color: var(--muted); margin: 4px 4px 0; }
.receipt.read { color: var(--accent); font-weight: 600; }
.receipt.pending { opacity: .8; }
.reactions { list-style: none; display: flex; gap: 4px; padding: 0; margin: 4px 2px 0; flex-wrap: wrap; }
.reaction { background: var(--panel); border: 1px solid var(--line); border-radius: 99px; padding: 1px 8px; font-size: 13px; }
.reaction-who { font-size: 11px; color: var(--muted); margin-left: 4px; }
.consent { border: 1px solid #c7cbf8; background: #fafaff; border-radius: 10px; padding: 10px 12px; color: var(--text); }
.consent-head { display: flex; justify-content: space-between; align-items: center; margin-bottom: 6px; }
.consent-kind { font-size: 11px; text-transform: uppercase; letter-spacing: .06em; color: var(--accent); font-weight: 700; }
.consent-members { list-style: none; padding: 0; margin: 0 0 6px; display: flex; flex-direction: column; gap: 5px; }
.consent-member { display: flex; justify-content: space-between; align-items: center; gap: 12px; }
.member-state { color: var(--ok); font-weight: 600; font-size: 12.5px; }
.consent-foot { margin: 4px 0 0; color: var(--muted); font-size: 12px; }
.typing { padding: 0 22px 6px; color: var(--muted); font-size: 12.5px; display: flex; gap: 8px; align-items: center; }
.dots { display: inline-flex; gap: 3px; }
.dots i { width: 6px; height: 6px; border-radius: 50%; background: #9ca3af; animation: bounce 1.2s infinite; }
.dots i:nth-child(2) { animation-delay: .15s; }
.dots i:nth-child(3) { animation-delay: .3s; }
@keyframes bounce { 0%, 60%, 100% { transform: translateY(0); } 30% { transform: translateY(-4px); } }
.composer { display: flex; gap: 8px; align-items: center; padding: 12px 22px 16px; background: var(--panel); border-top: 1px solid var(--line); }
.composer-as { color: var(--muted); font-size: 12.5px; }
.composer select { max-width: 160px; }
.composer input { flex: 1; padding: 9px 12px; }

/* Activity */
.tabs { display: flex; border-bottom: 1px solid var(--line); padding: 0 8px; position: sticky; top: 0; background: var(--panel); }
.tabs [role='tab'] { font: inherit; font-weight: 600; background: none; border: none; border-bottom: 2px solid transparent; padding: 12px 10px 10px; color: var(--muted); cursor: pointer; }
.tabs [role='tab'][aria-selected='true'] { color: var(--text); border-bottom-color: var(--accent); }
.count { font-size: 11px; background: #eef0f3; color: #4b5563; border-radius: 99px; padding: 1px 7px; margin-left: 4px; }
.panel { padding: 8px 12px 20px; overflow-y: auto; }
.log { width: 100%; border-collapse: collapse; font-size: 12.5px; }
.log th { text-align: left; color: var(--muted); font-weight: 600; font-size: 11px; text-transform: uppercase; letter-spacing: .05em; padding: 6px 6px; border-bottom: 1px solid var(--line); }
.log td { padding: 7px 6px; border-bottom: 1px solid #f0f1f4; vertical-align: top; }
.log .num { color: var(--muted); }
.event-type { font-family: var(--mono); font-size: 12px; }
.error-line { display: block; color: var(--bad); font-size: 11.5px; }
.status { font-weight: 700; font-family: var(--mono); }
.status.ok { color: var(--ok); }
.status.failed { color: var(--bad); }
.requests li { border-bottom: 1px solid #f0f1f4; }
.requests summary { cursor: pointer; padding: 7px 4px; display: flex; gap: 8px; align-items: baseline; list-style: none; }
.requests summary::-webkit-details-marker { display: none; }
.path { overflow-wrap: anywhere; }
.method { font-family: var(--mono); font-size: 11px; font-weight: 700; padding: 1px 6px; border-radius: 4px; background: #eef0f3; min-width: 52px; text-align: center; }
.method-post { background: var(--accent-soft); color: var(--accent); }
.method-get { background: var(--ok-soft); color: var(--ok); }
.method-patch { background: var(--warn-soft); color: var(--warn); }
.method-delete { background: var(--bad-soft); color: var(--bad); }
.request-body { font-family: var(--mono); font-size: 11.5px; background: #f6f7f9; border-radius: 8px; padding: 8px 10px; margin: 0 0 8px; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 260px; overflow-y: auto; }

.toast { position: fixed; bottom: 18px; left: 50%; transform: translateX(-50%); background: var(--bad); color: #fff; padding: 10px 16px; border-radius: 10px; box-shadow: 0 8px 24px rgba(0, 0, 0, .18); max-width: 80vw; }

@media (max-width: 1100px) {
  .layout { grid-template-columns: 250px minmax(0, 1fr); }
  .activity { grid-column: 1 / -1; border-left: none; border-top: 1px solid var(--line); max-height: 40vh; }
  body { overflow: auto; height: auto; min-height: 100vh; }
}
`;
