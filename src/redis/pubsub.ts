// Publish/subscribe across instances. A connection in subscribe mode can send nothing else, so the
// store opens its own subscriber (`client.duplicate()`) on the first subscribe and keeps it for every
// channel; listeners are counted here, so the subscriber sees one SUBSCRIBE per channel and an ioredis
// adapter stays a thin mapping.
//
// Lateness: a message reaches every subscriber connected when it is published, one network hop later.
// Redis pub/sub is at most once: a subscriber whose connection is down (Redis restarting, a network cut)
// misses what is published until it has reconnected and resubscribed. Nothing is ever delivered twice.

import type { Unsubscribe } from '../store/bot-store.js';
import type { RedisStoreSubscriber } from './client.js';
import type { Commands } from './commands.js';
import type { ResolvedRedisStoreOptions } from './options.js';

interface Channel {
  listeners: Set<(message: string) => void>;
  /** Settles when the channel's SUBSCRIBE was answered. */
  subscribed: Promise<unknown>;
  dispatch: (message: string) => void;
}

/** The store's subscriber connection and its channels. @internal */
export interface PubSub {
  subscribe(channel: string, onMessage: (message: string) => void): Promise<Unsubscribe>;
  /** Closes the subscriber connection. */
  close(): Promise<void>;
}

/** @internal */
export function createPubSub(options: ResolvedRedisStoreOptions, commands: Commands): PubSub {
  const channels = new Map<string, Channel>();
  let subscriber: Promise<RedisStoreSubscriber> | undefined;

  const connect = () => {
    subscriber ??= (async () => {
      const connection = options.client.duplicate();
      connection.on('error', options.onError);
      try {
        await connection.connect();
        return connection;
      } catch (error) {
        connection.destroy();
        throw error;
      }
    })().catch((error: unknown) => {
      subscriber = undefined; // the next subscribe tries again
      throw error;
    });
    return subscriber;
  };

  // Forgets a channel whose last listener left; a failed UNSUBSCRIBE only costs a dispatch to no one.
  const remove = async (name: string, channel: Channel) => {
    if (channels.get(name) !== channel) return;
    channels.delete(name);
    try {
      await channel.subscribed;
    } catch {
      return; // never subscribed
    }
    try {
      const connection = await subscriber;
      await connection?.unsubscribe(name, channel.dispatch);
    } catch (error) {
      options.onError(error instanceof Error ? error : new Error(String(error)));
    }
  };

  return {
    subscribe: (name, onMessage) =>
      commands.guard('subscribe', async () => {
        let channel = channels.get(name);
        if (!channel) {
          const listeners = new Set<(message: string) => void>();
          const dispatch = (message: string) => {
            for (const listener of listeners) listener(message);
          };
          const created: Channel = {
            listeners,
            dispatch,
            subscribed: connect().then((connection) => connection.subscribe(name, dispatch)),
          };
          channel = created;
          channels.set(name, created);
          created.subscribed.catch(() => void remove(name, created));
        }
        // Each subscription is its own entry, even for the same function (as in the memory store).
        const listener = (message: string) => onMessage(message);
        channel.listeners.add(listener);
        const current = channel;
        try {
          await current.subscribed;
        } catch (error) {
          current.listeners.delete(listener);
          throw error;
        }
        return async () => {
          current.listeners.delete(listener);
          if (current.listeners.size === 0) await remove(name, current);
        };
      }),
    async close() {
      const connection = await subscriber?.catch(() => undefined);
      subscriber = undefined;
      channels.clear();
      connection?.destroy();
    },
  };
}
