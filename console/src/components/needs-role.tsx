// A page the signed-in role may not use, reached by its address: says what it needs instead of
// offering a form the appliance would refuse.
import { href } from '../route.js';
import { ROLE_LABEL, useRole, type Role } from '../role.js';

export function NeedsRole({ needed, title, what }: { needed: Role; title: string; what: string }) {
  const role = useRole();
  return (
    <main id="main" tabIndex={-1} class="page narrow">
      <h1>{title}</h1>
      <div class="notice notice-info" role="status">
        {what} needs the {ROLE_LABEL[needed].toLowerCase()} role; you are signed in as {ROLE_LABEL[role].toLowerCase()}. An admin can change your role.
      </div>
      <p>
        <a href={href.cameras()}>Go to the cameras</a>
      </p>
    </main>
  );
}
