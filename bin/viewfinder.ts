/**
 * viewfinder: the admin CLI for MODE=hosted. It works directly on the configured store (MONGODB_URI,
 * else DATA_DIR), which is how a single-machine install creates its first account and key. Site and
 * key commands are the management API's operations (lib/management.ts), with the same rules.
 * Results are printed as JSON on stdout; errors go to stderr with exit code 1 (2 for bad configuration).
 */
import { Command, InvalidArgumentError } from 'commander';
import packageJson from '../package.json' with { type: 'json' };
import { ConfigError } from '../lib/env.ts';
import { isHttpError } from '../lib/errors.ts';
import { accountOperations, type AccountOperations } from '../lib/management.ts';
import { registerLinkCommands } from './links.ts';
import { registerUserCommands } from './users.ts';
import { loadStoreConfig, openStore } from '../lib/store/open.ts';
import type { Store } from '../lib/store/store.ts';

const KEY_WARNING = 'Store this key and its signingSecret now: they are shown only once and cannot be retrieved again.';

class CliError extends Error {}

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

function positiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('must be a positive integer');
  return Number(value);
}

function domainList(value: string): string[] {
  return value
    .split(',')
    .map((domain) => domain.trim())
    .filter((domain) => domain !== '');
}

async function withStore<T>(work: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(loadStoreConfig(process.env));
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

interface AccountOptions {
  account: string;
  domains?: string[];
  name?: string;
  site?: string;
  restrictDomains?: boolean;
  unsignedLinks?: boolean;
}

/**
 * An action on one account's sites or keys. Commander calls actions with the positional
 * arguments, then the options, then the command; `id` is the first positional argument, if any.
 */
function onAccount(work: (ops: AccountOperations, options: AccountOptions, id: string) => Promise<unknown>) {
  return (...args: unknown[]) => {
    const options = (args.at(-1) as Command).opts<AccountOptions>();
    const id = typeof args[0] === 'string' ? args[0] : '';
    return withStore(async (store) => {
      if (!(await store.getAccount(options.account))) throw new CliError(`Account ${options.account} not found`);
      print(await work(accountOperations(store, options.account), options, id));
    });
  };
}

const program = new Command('viewfinder')
  .description('Administer Viewfinder hosted mode (accounts, sites, API keys) in the configured store: MONGODB_URI, else DATA_DIR.')
  .version(packageJson.version)
  .showHelpAfterError();

const accounts = program.command('accounts').description('accounts');
accounts
  .command('create')
  .description('create an account and its first full-access API key (printed once)')
  .argument('<name>', 'the account name')
  .option('--rate-limit <perMinute>', 'captures per minute per key (default: RATE_LIMIT_PER_MINUTE)', positiveInt)
  .option('--key-name <name>', 'name of the first key', 'admin')
  .action((name: string, options: { rateLimit?: number; keyName: string }) =>
    withStore(async (store) => {
      const account = await store.createAccount({ name, rateLimitPerMinute: options.rateLimit ?? null });
      const key = await accountOperations(store, account.id).createKey({ name: options.keyName });
      print({ account, key });
      process.stderr.write(`${KEY_WARNING}\n`);
    }),
  );
accounts
  .command('list')
  .description('list every account')
  .action(() => withStore(async (store) => print({ accounts: await store.listAccounts() })));
accounts
  .command('set-rate-limit')
  .description("set an account's captures per minute per key; 'default' means RATE_LIMIT_PER_MINUTE")
  .argument('<accountId>')
  .argument('<perMinute>', "a positive integer, or 'default'", (value: string) => (value === 'default' ? null : positiveInt(value)))
  .action((accountId: string, perMinute: number | null) =>
    withStore(async (store) => {
      const account = await store.setAccountRateLimit(accountId, perMinute);
      if (!account) throw new CliError(`Account ${accountId} not found`);
      print(account);
    }),
  );

const ACCOUNT = ['-a, --account <accountId>', 'the account'] as const;
const DOMAINS = ['-d, --domains <list>', 'comma-separated allowed domains; "" for none', domainList] as const;

const sites = program.command('sites').description("an account's sites");
sites.command('list').description('list the sites').requiredOption(...ACCOUNT).action(onAccount((ops) => ops.listSites()));
sites
  .command('create')
  .description('create a site')
  .requiredOption(...ACCOUNT)
  .requiredOption(...DOMAINS)
  .option('-n, --name <name>', 'a name (default: the first domain)')
  .action(onAccount((ops, { domains, name }) => ops.createSite({ allowedDomains: domains ?? [], ...(name ? { name } : {}) })));
sites.command('get').description('show a site').argument('<siteId>').requiredOption(...ACCOUNT).action(onAccount((ops, _, id) => ops.getSite(id)));
sites
  .command('set-domains')
  .description("replace a site's allowed domains; keys apply them from their next request")
  .argument('<siteId>')
  .requiredOption(...ACCOUNT)
  .requiredOption(...DOMAINS)
  .action(onAccount((ops, { domains }, id) => ops.updateSite(id, { allowedDomains: domains ?? [] })));
sites
  .command('delete')
  .description('delete a site and the keys scoped to it')
  .argument('<siteId>')
  .requiredOption(...ACCOUNT)
  .action(onAccount(async (ops, _, id) => (await ops.deleteSite(id), { deleted: id })));

const keys = program.command('keys').description("an account's API keys");
keys.command('list').description('list the keys (never their secrets)').requiredOption(...ACCOUNT).action(onAccount((ops) => ops.listKeys()));
keys
  .command('create')
  .description('create a key (printed once): full access, or scoped to --site')
  .requiredOption(...ACCOUNT)
  .requiredOption('-n, --name <name>', 'the key name')
  .option('-s, --site <siteId>', 'scope the key to this site')
  .option('--restrict-domains', "site keys only: capture only the site's allowed domains")
  .option('--unsigned-links', 'site keys only: let GET /api/render take the key itself in the URL, unsigned (off by default)')
  .action(
    onAccount(async (ops, { name, site, restrictDomains, unsignedLinks }) => {
      const key = await ops.createKey({
        name: name ?? '',
        ...(site ? { siteId: site } : {}),
        ...(restrictDomains ? { restrictDomains } : {}),
        ...(unsignedLinks ? { unsignedLinks } : {}),
      });
      process.stderr.write(`${KEY_WARNING}\n`);
      return key;
    }),
  );
keys
  .command('delete')
  .description('delete a key; it stops working at once')
  .argument('<keyId>')
  .requiredOption(...ACCOUNT)
  .action(onAccount(async (ops, _, id) => (await ops.deleteKey(id), { deleted: id })));
keys
  .command('regenerate')
  .description('replace a key with a new one (printed once); the old one stops working at once')
  .argument('<keyId>')
  .requiredOption(...ACCOUNT)
  .action(
    onAccount(async (ops, _, id) => {
      const key = await ops.regenerateKey(id);
      process.stderr.write(`${KEY_WARNING}\n`);
      return key;
    }),
  );

registerUserCommands(program, withStore);
registerLinkCommands(program, print);

program
  .command('usage')
  .description('captures, failures and image bytes per site, per key and per page monitor')
  .requiredOption(...ACCOUNT)
  .action(onAccount((ops) => ops.usage()));

try {
  await program.parseAsync();
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`viewfinder: invalid configuration: ${err.message}\n`);
    process.exit(2);
  }
  if (err instanceof CliError || isHttpError(err)) {
    process.stderr.write(`viewfinder: ${err.message}\n`);
    process.exit(1);
  }
  throw err;
}
