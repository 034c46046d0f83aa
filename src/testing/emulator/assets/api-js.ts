// The emulator page's api.js, served at /_mock/ui/api.js. Browser code is kept as a string
// so it ships inside the package with no build step; it must hold no backtick and no dollar-brace.

/** The calls the page makes to /_mock and /v1. */
export const API_JS = `// The only calls the page makes: the mock's control surface under /_mock, and /v1 where a user
// acts with its own session token (accepting a group invite).

async function request(method, path, body, token) {
  const headers = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = 'Bearer ' + token;
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = text;
  }
  if (!response.ok) {
    const error = data && data.error;
    throw new Error(error ? error.code + ': ' + error.message : method + ' ' + path + ' answered HTTP ' + response.status);
  }
  return data;
}

const segment = (value) => encodeURIComponent(value);

/** Every action of the page, one function each. */
export const api = {
  state: () => request('GET', '/_mock/state'),
  createUser: (displayName) => request('POST', '/_mock/users', { display_name: displayName }),
  install: (userId, agentId) => request('POST', '/_mock/installs', { user_id: userId, agent_id: agentId }),
  post: (conversationId, userId, text) =>
    request('POST', '/_mock/conversations/' + segment(conversationId) + '/user-messages', {
      user_id: userId,
      text,
    }),
  advance: (seconds) => request('POST', '/_mock/clock/advance', { seconds }),
  reset: () => request('POST', '/_mock/reset'),
  accept: (inviteId, sessionToken) =>
    request('POST', '/v1/groups/invites/' + segment(inviteId) + '/accept', undefined, sessionToken),
};
`;
