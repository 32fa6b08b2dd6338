// Sign-in with the appliance's credentials (the same as the API's Basic credentials).
import { useState } from 'preact/hooks';
import { ApiError, signIn, type Session } from '../api.js';
import { ErrorNotice } from '../components/notice.js';

export function SignIn({ onSignedIn, ended }: { onSignedIn: (s: Session) => void; ended: boolean }) {
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await signIn(String(form.get('user') ?? ''), String(form.get('password') ?? '')));
    } catch (err) {
      setError(err as ApiError);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="sign-in" id="main">
      <form class="card sign-in-card" onSubmit={submit} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Video analytics appliance</h1>
        <p class="muted">Sign in with the appliance's user name and password (the API's credentials).</p>
        {ended && !error && (
          <div class="notice notice-info" role="status">
            Your session has ended. Sign in again to go on.
          </div>
        )}
        {error && <ErrorNotice error={error} title="Not signed in:" />}
        <label for="user">User name</label>
        <input id="user" name="user" autocomplete="username" required autofocus />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
