// The routes under /_mock that the emulator page reads: the live feed, a snapshot for the first
// paint, and uploaded files by attachment id (the page holds no download tokens).
import { fileResponse } from './attachments.js';
import { liveFeedResponse } from './event-stream.js';
import { json, notFound } from './http.js';
import { route } from './router.js';
import { takeSnapshot } from './snapshot.js';

/** `GET /_mock/events`, `GET /_mock/state`, `GET /_mock/files/{attachment_id}`. */
export const liveRoutes = [
  route({
    method: 'GET',
    path: '/_mock/events',
    auth: 'none',
    handle: (ctx) => liveFeedResponse(ctx.world, ctx.request.signal),
  }),
  route({
    method: 'GET',
    path: '/_mock/state',
    auth: 'none',
    handle: (ctx) => json(200, takeSnapshot(ctx.world)),
  }),
  route({
    method: 'GET',
    path: '/_mock/files/:attachment_id',
    auth: 'none',
    handle: (ctx) => {
      const id = ctx.params.attachment_id ?? '';
      const attachment = ctx.world.state.attachments.get(id);
      if (!attachment?.bytes) throw notFound(`file ${id} (unknown or not uploaded)`);
      return fileResponse(attachment, attachment.bytes);
    },
  }),
];
