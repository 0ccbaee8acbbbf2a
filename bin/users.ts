/**
 * `viewfinder users …`: the people who sign in to the dashboard. A password never appears on the
 * command line (where `ps` and shell history would keep it): it is read from stdin when stdin is
 * piped, and otherwise generated and printed once.
 */
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { BadRequest, NotFound } from '../lib/errors.ts';
import { hashPassword, passwordProblem } from '../lib/passwords.ts';
import type { Store } from '../lib/store/store.ts';
import type { User } from '../lib/store/users.ts';

const PASSWORD_WARNING = 'Give this password to the user now: it is shown only once and cannot be retrieved again.';
const EMAIL = /^[^\s@]+@[^\s@]+$/;

type WithStore = <T>(work: (store: Store) => Promise<T>) => Promise<T>;

/** What the CLI prints of a user: never the password hash. */
function userView(user: User) {
  return { id: user.id, accountId: user.accountId, email: user.email, createdAt: user.createdAt.toISOString() };
}

async function readStdin(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  return text.replace(/\r?\n$/, '');
}

/** The password from piped stdin, checked, or a generated one that the caller prints. */
async function choosePassword(): Promise<{ password: string; generated: boolean }> {
  if (process.stdin.isTTY) return { password: randomBytes(18).toString('base64url'), generated: true };
  const password = await readStdin();
  const problem = passwordProblem(password);
  if (problem) throw new BadRequest(problem);
  return { password, generated: false };
}

async function userByEmail(store: Store, email: string): Promise<User> {
  const user = await store.findUserByEmail(email);
  if (!user) throw new NotFound(`No user has the email ${email}`);
  return user;
}

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function registerUserCommands(program: Command, withStore: WithStore): void {
  const users = program.command('users').description('dashboard users: they sign in with an email and a password (piped on stdin, else generated)');
  users
    .command('create')
    .description("create a user of an account; the password is read from stdin, or generated and printed once")
    .requiredOption('-a, --account <accountId>', 'the account')
    .requiredOption('-e, --email <email>', 'the email the user signs in with')
    .action((options: { account: string; email: string }) =>
      withStore(async (store) => {
        if (!EMAIL.test(options.email.trim())) throw new BadRequest(`"${options.email}" is not an email address`);
        const { password, generated } = await choosePassword();
        const user = await store.createUser({ accountId: options.account, email: options.email, passwordHash: await hashPassword(password) });
        print({ user: userView(user), ...(generated ? { password } : {}) });
        if (generated) process.stderr.write(`${PASSWORD_WARNING}\n`);
      }),
    );
  users
    .command('list')
    .description('list the users (never their password hashes)')
    .option('-a, --account <accountId>', 'only this account')
    .action((options: { account?: string }) => withStore(async (store) => print({ users: (await store.listUsers(options.account)).map(userView) })));
  users
    .command('reset-password')
    .description("set a new password (stdin, or generated and printed once) and end the user's sessions")
    .argument('<email>')
    .action((email: string) =>
      withStore(async (store) => {
        const user = await userByEmail(store, email);
        const { password, generated } = await choosePassword();
        await store.setUserPassword(user.id, await hashPassword(password));
        const endedSessions = await store.deleteUserSessions(user.id);
        print({ user: userView(user), endedSessions, ...(generated ? { password } : {}) });
        if (generated) process.stderr.write(`${PASSWORD_WARNING}\n`);
      }),
    );
  users
    .command('delete')
    .description('delete a user; their sessions end at once')
    .argument('<email>')
    .action((email: string) =>
      withStore(async (store) => {
        const user = await userByEmail(store, email);
        await store.deleteUser(user.id);
        print({ deleted: user.id });
      }),
    );
}
