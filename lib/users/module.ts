// The users module: named users, their roles and cameras, API keys and the sign-in throttle's
// counts (schema.ts, user-store.ts), the checks of what a request presents (authenticator.ts),
// the /users and /keys routes (http/routes.ts), and the retention of the throttle's records.
import type { Database } from '../db/database.js';
import type { Duty } from '../duty-runner.js';
import type { ModuleRoutes, ServiceModule } from '../service-module.js';
import { userRoutes } from './http/routes.js';
import { usersSchema } from './schema.js';
import { KNOWN_ADDRESS_MS, type SignInThrottle } from './sign-in-throttle.js';
import { UserStore } from './user-store.js';
import type { Users } from './users.js';

export const usersModule = {
  schema: usersSchema,
  openStore: (db: Database) => new UserStore(db),
  routes: (users: Users): ModuleRoutes => (router) => userRoutes(router, users),
  duties: (store: UserStore, throttle: SignInThrottle, now: () => number): Duty[] => [
    {
      name: 'users.sign_ins',
      intervalMs: 10 * 60 * 1000,
      atStart: true,
      run: async () => ({ deleted: await store.purgeSignIns(now() - Math.max(throttle.windowMs, 60_000), now() - KNOWN_ADDRESS_MS) }),
    },
  ],
} satisfies ServiceModule;
