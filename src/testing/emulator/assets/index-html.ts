// The emulator page's index.html, served at /. Browser code is kept as a string
// so it ships inside the package with no build step; it must hold no backtick and no dollar-brace.

/** The page itself: the fixed skeleton that app.js fills. */
export const EMULATOR_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Agent Messaging emulator</title>
  <link rel="stylesheet" href="/_mock/ui/emulator.css">
  <link rel="icon" href="data:,">
  <script type="module" src="/_mock/ui/app.js"></script>
</head>
<body>
  <header class="topbar">
    <div class="brand">
      <span class="logo" aria-hidden="true">◆</span>
      <span class="brand-name">Agent Messaging</span>
      <span class="brand-tag">emulator</span>
      <span id="connection" class="connection" data-state="connecting" role="status">Connecting…</span>
    </div>
    <div class="clock" role="group" aria-label="Mock clock">
      <div class="clock-read">
        <span id="clock-now" class="clock-now mono">–</span>
        <span id="clock-offset" class="clock-offset">real time</span>
      </div>
      <button type="button" class="btn btn-small" data-advance="10" title="Typing state expires">+10 s</button>
      <button type="button" class="btn btn-small" data-advance="120" title="The unsend window closes">+2 min</button>
      <button type="button" class="btn btn-small" data-advance="300" title="A failed webhook's next retries">+5 min</button>
      <button type="button" class="btn btn-small" data-advance="3600">+1 h</button>
      <form id="advance-form" class="advance-form">
        <label class="sr-only" for="advance-seconds">Seconds to advance</label>
        <input id="advance-seconds" type="number" min="0" step="1" value="86400" inputmode="numeric">
        <button type="submit" class="btn btn-small">Advance</button>
      </form>
      <button type="button" id="reset" class="btn btn-small btn-quiet">Reset</button>
    </div>
  </header>
  <main class="layout">
    <nav class="sidebar" aria-label="Mock state">
      <section aria-labelledby="agents-title">
        <h2 id="agents-title">Agents</h2>
        <ul id="agents" class="entities"></ul>
      </section>
      <section aria-labelledby="users-title">
        <h2 id="users-title">Users</h2>
        <ul id="users" class="entities"></ul>
        <form id="create-user" class="inline-form">
          <label class="sr-only" for="create-user-name">New user's name</label>
          <input id="create-user-name" name="display_name" placeholder="New user's name" maxlength="64" required autocomplete="off">
          <button type="submit" class="btn btn-small">Create user</button>
        </form>
        <form id="install" class="stack-form" aria-label="Install an agent for a user">
          <label class="field" for="install-user"><span>User</span><select id="install-user"></select></label>
          <label class="field" for="install-agent"><span>Agent</span><select id="install-agent"></select></label>
          <button type="submit" id="install-submit" class="btn btn-small">Install agent</button>
        </form>
      </section>
      <section aria-labelledby="conversations-title">
        <h2 id="conversations-title">Conversations</h2>
        <ul id="conversations" class="conversations"></ul>
      </section>
      <section id="invites-section" aria-labelledby="invites-title" hidden>
        <h2 id="invites-title">Group invites</h2>
        <ul id="invites" class="entities"></ul>
      </section>
    </nav>
    <section class="chat-pane" aria-label="Conversation">
      <div id="chat-empty" class="chat-empty">
        <h1>Chat with your bot</h1>
        <ol class="steps">
          <li>Start your bot and register it: <code>POST /v1/agents</code>, then <code>PATCH /v1/agents/{id}/webhook</code> with your webhook URL.</li>
          <li>Create a user on the left, and install your agent for that user.</li>
          <li>Open the conversation and say hello. Replies stream in as your bot writes them.</li>
        </ol>
      </div>
      <div id="chat" class="chat" hidden>
        <header class="chat-header">
          <div class="chat-title-row">
            <h1 id="chat-title" class="chat-title"></h1>
            <span id="chat-kind" class="badge"></span>
          </div>
          <div id="chat-members" class="chat-members"></div>
        </header>
        <ol id="messages" class="messages" aria-live="polite" aria-label="Messages"></ol>
        <p id="messages-empty" class="messages-empty" hidden>No messages yet. Say something below.</p>
        <div id="typing" class="typing" role="status" hidden></div>
        <form id="composer" class="composer">
          <label class="composer-as" for="composer-user">As</label>
          <select id="composer-user"></select>
          <label class="sr-only" for="composer-text">Message</label>
          <input id="composer-text" placeholder="Write a message…" autocomplete="off" maxlength="32000">
          <button type="submit" id="composer-send" class="btn btn-primary">Send</button>
        </form>
      </div>
    </section>
    <aside class="activity" aria-label="Activity">
      <div class="tabs" role="tablist" aria-label="Activity">
        <button type="button" role="tab" id="tab-deliveries" aria-controls="panel-deliveries" aria-selected="true">Webhook deliveries <span id="deliveries-count" class="count">0</span></button>
        <button type="button" role="tab" id="tab-requests" aria-controls="panel-requests" aria-selected="false" tabindex="-1">Requests <span id="requests-count" class="count">0</span></button>
      </div>
      <div id="panel-deliveries" role="tabpanel" aria-labelledby="tab-deliveries" class="panel">
        <table class="log">
          <thead><tr><th scope="col">Time</th><th scope="col">Event</th><th scope="col">Try</th><th scope="col">Status</th></tr></thead>
          <tbody id="deliveries"></tbody>
        </table>
        <p id="deliveries-empty" class="empty">No webhook delivery yet.</p>
      </div>
      <div id="panel-requests" role="tabpanel" aria-labelledby="tab-requests" class="panel" hidden>
        <ol id="requests" class="requests"></ol>
        <p id="requests-empty" class="empty">No /v1 request yet.</p>
      </div>
    </aside>
  </main>
  <div id="toast" class="toast" role="alert" hidden></div>
</body>
</html>
`;
