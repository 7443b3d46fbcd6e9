/**
 * The headers every HTML page of the service sends so that no other site can frame it. The
 * GraphQL console and the REST docs keep the key a visitor pasted (GraphiQL also prefills its
 * editor from `?query=`): framed nearly transparent under a decoy, one click ran a mutation with
 * that key. `frame-ancestors` is the standard; `X-Frame-Options` is for browsers without CSP 3.
 */
const FRAME_ANCESTORS = "frame-ancestors 'none'";

/** `csp`, the page's own policy (if any), with framing forbidden, and X-Frame-Options: DENY. */
export function unframeable(csp?: string): Record<'content-security-policy' | 'x-frame-options', string> {
  return {
    'content-security-policy': csp ? `${csp}; ${FRAME_ANCESTORS}` : FRAME_ANCESTORS,
    'x-frame-options': 'DENY',
  };
}
