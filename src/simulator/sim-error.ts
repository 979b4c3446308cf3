import { CrmsyncError } from '../errors.js';

/**
 * An error answer of the simulated service. `status`/`code`/`message` give the body the spec
 * describes ({code, message, data: {status}}); `real` overrides it in real-deployment mode with
 * what fluentcrm-2.9 actually sent (often 422 with a bare field map, or a body with no code).
 */
export class SimError extends CrmsyncError {
  constructor(
    readonly status: number,
    code: string | null,
    message: string,
    readonly real?: { status: number; body: unknown; contentType?: string },
    readonly extraHeaders?: Record<string, string>,
  ) {
    super(code ?? 'SIM_ERROR', message);
    this.specCode = code;
  }

  readonly specCode: string | null;

  specBody(): unknown {
    return this.specCode === null ? { message: this.message, data: { status: this.status } } : { code: this.specCode, message: this.message, data: { status: this.status } };
  }
}

/** WordPress's answer to a PHP fatal error, as captured (JSON form). */
export const WP_CRITICAL_ERROR_BODY = {
  code: 'internal_server_error',
  message: '<p>There has been a critical error on this website.</p><p><a href="https://wordpress.org/support/article/faq-troubleshooting/">Learn more about troubleshooting WordPress.</a></p>',
  data: { status: 500 },
  additional_errors: [],
};

/** A PHP fatal error: 500 in spec mode, WordPress's critical-error JSON in real mode. */
export const criticalError = (message: string): SimError => new SimError(500, 'internal_server_error', message, { status: 500, body: WP_CRITICAL_ERROR_BODY });

export const notFound = (what: string, real?: SimError['real']): SimError => new SimError(404, 'rest_post_invalid_id', `Invalid ${what} ID; check the id (it may have been deleted).`, real);

export const invalidParam = (field: string, message: string, realRule = 'invalid'): SimError =>
  new SimError(400, 'rest_invalid_param', `Invalid parameter(s): ${field}. ${message}`, { status: 422, body: { [field]: { [realRule]: message } } });
