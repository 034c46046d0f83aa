import { type ApiPromise, apiPromise, type WithResponse } from '../core/api-promise.js';
import { ValidationError } from '../core/errors.js';
import type { RequestOptions } from '../core/options.js';
import type { Attachment, CreateAttachmentRequest } from '../schemas/attachments.js';
import { Resource } from './resource.js';

/** Upload progress, as bytes leave the process. */
export interface UploadProgress {
  /** 0 to 1. */
  percent: number;
  transferredBytes: number;
  totalBytes: number;
}

/** What `attachments.upload` needs besides the bytes. */
export interface UploadInput {
  /** The file name; defaults to the name of a `File`. */
  name?: string;
  /** The MIME type; defaults to the `type` of a `Blob`. */
  mime_type?: string;
  /** Called as the bytes are sent. */
  onProgress?: (progress: UploadProgress) => void;
}

/** The bytes `attachments.upload` takes. */
export type UploadData = Blob | ArrayBuffer | Uint8Array;

/** Upload handles: create one, or create one and send the bytes in one call. */
export class Attachments extends Resource {
  /** Creates an upload handle: `{ name, mime_type, size_bytes }`. Messages reference its `attachment_id`. */
  create(body: CreateAttachmentRequest, options?: RequestOptions): ApiPromise<Attachment> {
    return this._transport.request('attachments.create', { body, options });
  }

  /**
   * Creates a handle for the bytes and PUTs them to its `upload_url` (no Authorization header goes
   * there), reporting progress. Resolves with the handle once the upload succeeded.
   *
   * @example
   * const { attachment_id } = await client.attachments.upload(bytes, { name: 'report.pdf', mime_type: 'application/pdf' });
   * await client.messages.send(cnv, { content: [{ type: 'file', attachmentId: attachment_id }] });
   */
  upload(data: UploadData, input: UploadInput = {}, options?: RequestOptions): ApiPromise<Attachment> {
    return apiPromise(this.#upload(data, input, options));
  }

  async #upload(
    data: UploadData,
    input: UploadInput,
    options?: RequestOptions,
  ): Promise<WithResponse<Attachment>> {
    const operation = 'attachments.upload';
    const body = toBody(data, operation);
    if (input.onProgress !== undefined && typeof input.onProgress !== 'function') {
      throw new ValidationError([{ field: 'onProgress', message: 'must be a function' }], operation);
    }
    const name = input.name ?? (typeof File !== 'undefined' && data instanceof File ? data.name : undefined);
    const mime = input.mime_type ?? (body instanceof Blob && body.type !== '' ? body.type : undefined);
    const size = body instanceof Blob ? body.size : body.byteLength;
    const request = { name, mime_type: mime, size_bytes: size };
    const handle = await this._transport.request('attachments.create', { body: request, options, operation });
    // The PUT goes outside /v1: it takes the caller's signal and limits, not its key or headers.
    const response = await this._transport.upload({
      url: handle.upload_url,
      body,
      contentType: request.mime_type as string,
      onProgress: input.onProgress,
      operation,
      options: options && {
        signal: options.signal,
        timeoutMs: options.timeoutMs,
        maxRetries: options.maxRetries,
      },
    });
    return { data: handle, response, requestId: response.headers.get('request-id') ?? undefined };
  }
}

function toBody(data: UploadData, operation: string): Blob | Uint8Array<ArrayBuffer> {
  if (data instanceof Blob) return data;
  // A view over a SharedArrayBuffer (or a resizable one) is not a valid fetch body: copy it.
  if (data instanceof Uint8Array)
    return data.buffer instanceof ArrayBuffer ? (data as Uint8Array<ArrayBuffer>) : new Uint8Array(data);
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  throw new ValidationError(
    [{ field: 'data', message: 'must be a Blob, an ArrayBuffer or a Uint8Array' }],
    operation,
  );
}
