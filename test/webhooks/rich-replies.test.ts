// Replies beyond text through the mock: quick replies (an actions block of postbacks) on sent and
// streamed replies, files and images with a caption, each posted once across a redelivery.
import type { MessageContext } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { createLoop, recordMessage, replay } from './harness.js';

const buttons = [
  { actionId: 'yes', label: 'Yes', value: 'pick:yes' },
  { actionId: 'no', label: 'No' },
];

describe('ctx.reply with quickReplies', () => {
  it('sends an actions block of postbacks, and the click comes back to bot.action', async () => {
    const loop = await createLoop();
    const chosen: unknown[] = [];
    loop.bot.action('yes', (ctx) => {
      chosen.push(ctx.action);
    });
    loop.bot.on('message.received', (ctx) => ctx.reply('Pick one', { quickReplies: buttons }));
    await loop.post('menu');
    const [reply] = await loop.agentMessages();
    expect(reply?.parts).toEqual([
      { part_index: 0, type: 'text', text: 'Pick one' },
      {
        part_index: 1,
        type: 'actions',
        actions: [
          { actionId: 'yes', label: 'Yes', behavior: { type: 'postback', value: 'pick:yes' } },
          { actionId: 'no', label: 'No', behavior: { type: 'postback', value: 'no' } },
        ],
      },
    ]);
    expect(reply?.fallback_text).toBe('Pick one');
    loop.mock.clickAction({
      conversation_id: loop.conversationId,
      user_id: loop.user.id,
      message_id: reply?.id ?? '',
      action_id: 'yes',
    });
    await loop.mock.idle();
    expect(chosen).toEqual([{ actionId: 'yes', value: 'pick:yes', messageId: reply?.id }]);
  });

  it('puts the buttons under a streamed reply too', async () => {
    const loop = await createLoop();
    loop.bot.on('message.received', (ctx) =>
      ctx.reply(
        (async function* () {
          yield 'Streamed ';
          yield 'answer';
        })(),
        { quickReplies: buttons },
      ),
    );
    await loop.post('menu');
    const [reply] = await loop.agentMessages();
    expect(reply?.status).toBe('sent');
    expect(reply?.parts?.map((p) => p.type)).toEqual(['text', 'actions']);
    expect(reply?.parts?.[0]?.text).toBe('Streamed answer');
  });

  it('refuses bad quick replies with a ValidationError naming the field, before sending', async () => {
    const loop = await createLoop();
    const errors: { name: string; field: string }[] = [];
    loop.bot.on('message.received', async (ctx: MessageContext) => {
      for (const quickReplies of [
        [],
        [{ actionId: '', label: 'x' }],
        [{ actionId: 'a', label: 'A', value: '' }],
      ]) {
        try {
          await ctx.reply('x', { quickReplies });
        } catch (error) {
          errors.push({
            name: (error as Error).name,
            field: (error as { issues: { field: string }[] }).issues[0]?.field ?? '',
          });
        }
      }
    });
    await loop.post('menu');
    expect(errors).toEqual([
      { name: 'ValidationError', field: 'quickReplies' },
      { name: 'ValidationError', field: 'quickReplies[0].actionId' },
      { name: 'ValidationError', field: 'quickReplies[0].value' },
    ]);
    expect(loop.requests({ method: 'POST', path: /\/messages$/ })).toHaveLength(0);
  });
});

describe('ctx.replyWithFile', () => {
  it('uploads and replies with an image block under a caption, or a file block', async () => {
    const loop = await createLoop();
    const png = new Uint8Array([137, 80, 78, 71, 1, 2, 3]);
    loop.bot.on('message.received', async (ctx: MessageContext) => {
      await ctx.replyWithFile(png, { name: 'chart.png', mime_type: 'image/png', caption: 'Here' });
      await ctx.replyWithFile(new Blob(['a,b\n1,2\n']), { name: 'data.csv', mime_type: 'text/csv' });
    });
    await loop.post('files please');
    const [image, file] = await loop.agentMessages();
    expect(image?.parts?.map((p) => p.type)).toEqual(['text', 'image']);
    expect(image?.parts?.[0]?.text).toBe('Here');
    expect(image?.fallback_text).toBe('Here');
    expect(file?.parts?.map((p) => p.type)).toEqual(['file']);
    expect(file?.fallback_text).toBe('data.csv');
    const attachmentId = image?.parts?.[1]?.attachment_id ?? '';
    const uploaded = loop.mock.snapshot().attachments.find((a) => a.id === attachmentId);
    expect(uploaded).toMatchObject({ name: 'chart.png', mime_type: 'image/png', size_bytes: 7 });
  });

  it('neither uploads again nor posts twice when a failed delivery is retried', async () => {
    const loop = await createLoop();
    const delivery = await recordMessage(loop, 'file please');
    let runs = 0;
    loop.bot.on('message.received', async (ctx: MessageContext) => {
      runs += 1;
      await ctx.replyWithFile(new Uint8Array([1, 2, 3]), {
        name: 'a.bin',
        mime_type: 'application/octet-stream',
      });
      if (runs === 1) throw new Error('failed after the file');
    });
    loop.bot.onError(() => undefined);
    expect((await loop.bot.fetch(replay(delivery))).status).toBe(500);
    expect((await loop.bot.fetch(replay(delivery))).status).toBe(200);
    expect(runs).toBe(2);
    expect(await loop.agentMessages()).toHaveLength(1);
    expect(loop.requests({ method: 'POST', path: /^\/v1\/attachments$/ })).toHaveLength(1);
    // The retry's send carried the same key and body: the service replayed it.
    const sends = loop.requests({ method: 'POST', path: /\/messages$/ });
    expect(sends).toHaveLength(2);
    expect(sends[0]?.headers['idempotency-key']).toMatch(/\S/);
    expect(sends[0]?.headers['idempotency-key']).toBe(sends[1]?.headers['idempotency-key']);
    expect(sends[0]?.body).toBe(sends[1]?.body);
  });

  it('refuses a missing mime_type with a ValidationError naming it, before uploading', async () => {
    const loop = await createLoop();
    const fields: string[] = [];
    loop.bot.on('message.received', async (ctx: MessageContext) => {
      try {
        await ctx.replyWithFile(new Uint8Array([1]), { name: 'x' } as never);
      } catch (error) {
        fields.push((error as { issues: { field: string }[] }).issues[0]?.field ?? '');
      }
    });
    await loop.post('file');
    expect(fields).toEqual(['mime_type']);
    expect(loop.requests({ method: 'POST', path: /^\/v1\/attachments$/ })).toHaveLength(0);
  });
});
