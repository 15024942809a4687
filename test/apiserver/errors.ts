// metav1.Status errors, built the way k8s.io/apimachinery/pkg/api/errors builds them (same code, reason,
// message wording and details), so clients that match on `reason` or parse `details` see what they would see live.

/** metav1.StatusCause: the Go field is `Type`, but its JSON key is `reason`. */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** A failed API call: `status` is the body the server answers with, `status.code` its HTTP status. */
export class ApiError extends Error {
  constructor(readonly status: Status) {
    super(status.message ?? `HTTP ${status.code}`);
    this.name = 'ApiError';
  }

  get code(): number {
    return this.status.code;
  }

  get reason(): string | undefined {
    return this.status.reason;
  }
}

export interface GroupResource {
  group: string;
  resource: string;
}

export interface GroupKind {
  group: string;
  kind: string;
}

/** One field.Error: its type decides the wording (`Required value`, `Invalid value: "x"`, `Forbidden`, ...). */
export interface FieldError {
  field: string;
  type: 'FieldValueRequired' | 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueNotSupported';
  detail?: string;
  value?: unknown;
}

function qualifiedResource(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

function failure(code: number, reason: string | undefined, message: string, details?: StatusDetails): ApiError {
  const status: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code };
  if (reason !== undefined) status.reason = reason;
  if (details !== undefined) status.details = details;
  return new ApiError(status);
}

function resourceDetails(gr: GroupResource, name: string): StatusDetails {
  const details: StatusDetails = { name };
  if (gr.group) details.group = gr.group;
  details.kind = gr.resource;
  return details;
}

function fieldErrorBody(err: FieldError): string {
  const detail = err.detail ? `: ${err.detail}` : '';
  switch (err.type) {
    case 'FieldValueRequired':
      return `Required value${detail}`;
    case 'FieldValueForbidden':
      return `Forbidden${detail}`;
    case 'FieldValueNotSupported':
      return `Unsupported value: ${JSON.stringify(err.value)}${detail}`;
    case 'FieldValueInvalid':
      return `Invalid value: ${typeof err.value === 'string' ? JSON.stringify(err.value) : String(err.value)}${detail}`;
  }
}

export const errors = {
  notFound(gr: GroupResource, name: string): ApiError {
    return failure(404, 'NotFound', `${qualifiedResource(gr)} "${name}" not found`, resourceDetails(gr, name));
  },

  /** Unknown URL or resource: the server's generic 404. */
  pathNotFound(): ApiError {
    return failure(404, 'NotFound', 'the server could not find the requested resource', {});
  },

  alreadyExists(gr: GroupResource, name: string): ApiError {
    return failure(
      409,
      'AlreadyExists',
      `${qualifiedResource(gr)} "${name}" already exists`,
      resourceDetails(gr, name),
    );
  },

  conflict(gr: GroupResource, name: string, why: string): ApiError {
    return failure(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${qualifiedResource(gr)} "${name}": ${why}`,
      resourceDetails(gr, name),
    );
  },

  /** The optimistic-concurrency conflict of an update whose resourceVersion is stale. */
  modified(gr: GroupResource, name: string): ApiError {
    return errors.conflict(
      gr,
      name,
      'the object has been modified; please apply your changes to the latest version and try again',
    );
  },

  invalid(gk: GroupKind, name: string, fieldErrors: FieldError[]): ApiError {
    const qualifiedKind = gk.group ? `${gk.kind}.${gk.group}` : gk.kind;
    const rendered = fieldErrors.map((e) => `${e.field}: ${fieldErrorBody(e)}`);
    const summary = rendered.length === 1 ? rendered[0] : `[${rendered.join(', ')}]`;
    const details: StatusDetails = { name };
    if (gk.group) details.group = gk.group;
    details.kind = gk.kind;
    details.causes = fieldErrors.map((e) => ({ reason: e.type, message: fieldErrorBody(e), field: e.field }));
    return failure(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${summary}`, details);
  },

  badRequest(message: string): ApiError {
    return failure(400, 'BadRequest', message);
  },

  forbidden(gr: GroupResource, name: string, why: string): ApiError {
    return failure(
      403,
      'Forbidden',
      `${qualifiedResource(gr)} "${name}" is forbidden: ${why}`,
      resourceDetails(gr, name),
    );
  },

  tooManyRequests(message: string, retryAfterSeconds: number, causes?: StatusCause[]): ApiError {
    const details: StatusDetails = {};
    if (causes !== undefined) details.causes = causes;
    if (retryAfterSeconds > 0) details.retryAfterSeconds = retryAfterSeconds;
    return failure(429, 'TooManyRequests', message, details);
  },

  serviceUnavailable(message: string, retryAfterSeconds = 0): ApiError {
    const details: StatusDetails | undefined = retryAfterSeconds > 0 ? { retryAfterSeconds } : undefined;
    return failure(503, 'ServiceUnavailable', message, details);
  },

  /** 410 Gone with reason Expired: a resourceVersion or continue token older than what is retained. */
  expired(message: string): ApiError {
    return failure(410, 'Expired', message);
  },

  internal(message: string): ApiError {
    return failure(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
  },

  methodNotSupported(gr: GroupResource, action: string): ApiError {
    return failure(
      405,
      'MethodNotAllowed',
      `${action} is not supported on resources of kind "${qualifiedResource(gr)}"`,
      resourceDetails(gr, ''),
    );
  },

  unsupportedMediaType(contentType: string, accepted: string[]): ApiError {
    return failure(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
      { causes: [{ reason: 'UnsupportedMediaType', message: contentType }] },
    );
  },

  unauthorized(): ApiError {
    return failure(401, 'Unauthorized', 'Unauthorized');
  },

  /** An arbitrary failure, as injected by `faults`; the reason follows the code the way the real server maps it. */
  fromCode(code: number, message?: string, retryAfterSeconds?: number): ApiError {
    const reasons: Record<number, string> = {
      400: 'BadRequest',
      401: 'Unauthorized',
      403: 'Forbidden',
      404: 'NotFound',
      405: 'MethodNotAllowed',
      409: 'Conflict',
      410: 'Expired',
      415: 'UnsupportedMediaType',
      422: 'Invalid',
      429: 'TooManyRequests',
      500: 'InternalError',
      503: 'ServiceUnavailable',
      504: 'Timeout',
    };
    const details: StatusDetails | undefined =
      retryAfterSeconds !== undefined && retryAfterSeconds > 0 ? { retryAfterSeconds } : undefined;
    return failure(code, reasons[code], message ?? `injected failure (HTTP ${code})`, details);
  },
};

export function successStatus(code: number, details?: StatusDetails): Status {
  const status: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code };
  if (details !== undefined) status.details = details;
  return status;
}
