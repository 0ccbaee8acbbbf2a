/**
 * `viewfinder links sign`: builds a signed render link (docs/render-links.md) on this machine. It
 * needs no store, only the key id and its signing secret, which is read from the environment
 * (VIEWFINDER_SIGNING_SECRET) and never from the command line, where `ps` and shell history would
 * keep it.
 */
import { Command, InvalidArgumentError } from 'commander';
import { SIGNING_SECRET_PREFIX } from '../lib/api-keys.ts';
import { BadRequest } from '../lib/errors.ts';
import { LINK_PARAMETERS, signRenderLink } from '../lib/render-links.ts';

export const SIGNING_SECRET_ENV = 'VIEWFINDER_SIGNING_SECRET';

interface SignOptions {
  origin: string;
  keyId: string;
  url: string;
  option: Array<[string, string]>;
  expiresIn?: number;
}

function nameValue(value: string, previous: Array<[string, string]> = []): Array<[string, string]> {
  const at = value.indexOf('=');
  if (at < 1) throw new InvalidArgumentError('must be name=value, e.g. fullPage=true');
  const name = value.slice(0, at);
  if (name === 'url' || (LINK_PARAMETERS as readonly string[]).includes(name)) throw new InvalidArgumentError(`${name} has an option of its own`);
  return [...previous, [name, value.slice(at + 1)]];
}

function seconds(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('must be a positive number of seconds');
  return Number(value);
}

/** The API's address as PUBLIC_BASE_URL may give it: an origin, or an origin and a path prefix (kept; the query and fragment are not). */
function apiAddress(value: string): string {
  const url = URL.parse(value);
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new InvalidArgumentError('must be an http or https URL');
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

export function registerLinkCommands(program: Command, print: (value: unknown) => void): void {
  const links = program.command('links').description('render links for <img src>');
  links
    .command('sign')
    .description(`sign a render link with a key id and the signing secret in $${SIGNING_SECRET_ENV}`)
    .requiredOption('--origin <url>', "the API's address, e.g. https://viewfinder.example.com, or with the path prefix it is served under", apiAddress)
    .requiredOption('-k, --key-id <keyId>', 'the id of the key (key_...), not the key itself')
    .requiredOption('-u, --url <url>', 'the page to capture')
    .option('-o, --option <name=value>', 'a capture option, repeatable: -o fullPage=true -o cacheTtl=86400 -o hideSelectors=.ad', nameValue, [])
    .option('--expires-in <seconds>', 'the link answers 403 after this many seconds (default: it never expires)', seconds)
    .action((options: SignOptions) => {
      const signingSecret = process.env[SIGNING_SECRET_ENV];
      if (!signingSecret?.startsWith(SIGNING_SECRET_PREFIX)) {
        throw new BadRequest(`Set ${SIGNING_SECRET_ENV} to the key's signing secret (${SIGNING_SECRET_PREFIX}...), shown once when the key was created or regenerated`);
      }
      const expires = options.expiresIn === undefined ? undefined : Math.floor(Date.now() / 1000) + options.expiresIn;
      const link = signRenderLink({ origin: options.origin, options: [['url', options.url], ...options.option], keyId: options.keyId, signingSecret, expires });
      print({ link, keyId: options.keyId, expires: expires === undefined ? null : new Date(expires * 1000).toISOString() });
    });
}
