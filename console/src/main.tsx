// The operator console: one page at `/`, its views in the URL's fragment. It signs in with the
// appliance's credentials (a session cookie) and then reads the same REST API as every client.
// The session's role decides what the pages offer (role.ts): a viewer reads, an operator also
// acts on cameras and runs jobs, an admin also manages users, keys and reads the audit trail.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { currentSession, loadSession, signOut, whenSignedOut, type Session } from './api.js';
import { NeedsRole } from './components/needs-role.js';
import { ErrorNotice, Loading } from './components/notice.js';
import { AuditPage } from './pages/audit.js';
import { CameraPage } from './pages/camera.js';
import { CamerasPage } from './pages/cameras.js';
import { FaceLogPage } from './pages/face-log.js';
import { JobsPage } from './pages/jobs.js';
import { KamcheckJobPage } from './pages/kamcheck-job.js';
import { KeysPage } from './pages/keys.js';
import { SignIn } from './pages/sign-in.js';
import { UploadPage } from './pages/upload.js';
import { UsersPage } from './pages/users.js';
import { allows, ROLE_LABEL, RoleContext, type Role } from './role.js';
import { href, useRoute, type Route } from './route.js';
import { ApiError } from './api.js';

function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [ended, setEnded] = useState(false);
  const [failure, setFailure] = useState<ApiError | null>(null);
  useEffect(() => {
    whenSignedOut(() => {
      setEnded(true);
      setSession(null);
    });
    loadSession().then(setSession, (err) => setFailure(err));
  }, []);
  if (failure) {
    return (
      <main class="sign-in" id="main">
        <div class="card sign-in-card">
          <h1>Video analytics appliance</h1>
          <ErrorNotice error={failure} title="The console cannot start:" />
          <button type="button" onClick={() => location.reload()}>
            Try again
          </button>
        </div>
      </main>
    );
  }
  if (session === undefined) return <Loading what="the console" />;
  if (session === null)
    return (
      <SignIn
        ended={ended}
        onSignedIn={(s) => {
          setEnded(false);
          setSession(s);
        }}
      />
    );
  return <Shell session={session} onSignOut={() => signOut().finally(() => setSession(currentSession()))} />;
}

function Shell({ session, onSignOut }: { session: Session; onSignOut: () => void }) {
  const route = useRoute();
  useEffect(() => {
    document.title = `${titleOf(route)} · Video analytics appliance`;
  }, [route.page, 'camera' in route ? route.camera : '']);
  const section = sectionOf(route);
  const role: Role = session.role ?? 'viewer';
  const limited = session.cameras ? ` · limited to ${session.cameras.length === 1 ? 'camera' : 'cameras'} ${session.cameras.join(', ')}` : '';
  const link = (to: string, name: typeof section, label: string) => (
    <a href={to} aria-current={section === name ? 'page' : undefined}>
      {label}
    </a>
  );
  return (
    <RoleContext.Provider value={role}>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to the content
      </a>
      <header class="topbar">
        <a class="brand" href={href.cameras()}>
          <img src="/console/icon.svg" alt="" width={24} height={24} />
          <span>Video analytics</span>
        </a>
        <nav aria-label="Main">
          {link(href.cameras(), 'cameras', 'Cameras')}
          {link(href.jobs('kamcheck'), 'jobs', 'Jobs')}
          {allows(role, 'operator') && link(href.upload('kamcheck'), 'upload', 'Run a job')}
          {allows(role, 'admin') && (
            <>
              <span class="nav-gap" aria-hidden="true" />
              {link(href.users(), 'users', 'Users')}
              {link(href.keys(), 'keys', 'Keys')}
              {link(href.audit(), 'audit', 'Audit')}
            </>
          )}
        </nav>
        <div class="user">
          <span class="muted" title={`Session until ${new Date(session.expires_at).toLocaleString()}${limited}`}>
            {session.user}
          </span>
          <span class={`role role-${role}`}>
            <span class="visually-hidden">role: </span>
            {ROLE_LABEL[role]}
          </span>
          <button type="button" class="link-button" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      <Page route={route} role={role} />
    </RoleContext.Provider>
  );
}

function Page({ route, role }: { route: Route; role: Role }) {
  switch (route.page) {
    case 'cameras':
      return <CamerasPage />;
    case 'camera':
      return <CameraPage id={route.camera} key={route.camera} />;
    case 'jobs':
      return <JobsPage kind={route.kind} number={route.number} key={`${route.kind}${route.number}`} />;
    case 'kamcheck':
      return <KamcheckJobPage jobId={route.jobId} key={route.jobId} />;
    case 'face_log':
      return <FaceLogPage analytic={route.analytic} jobId={route.jobId} key={route.jobId} />;
    case 'upload':
      if (!allows(role, 'operator')) return <NeedsRole needed="operator" title="Run a job" what="Running a job" />;
      return <UploadPage kind={route.kind} key={route.kind} />;
    case 'users':
    case 'keys':
    case 'audit':
      if (!allows(role, 'admin')) return <NeedsRole needed="admin" title={titleOf(route)} what={ADMIN_PAGES[route.page]} />;
      return route.page === 'users' ? <UsersPage /> : route.page === 'keys' ? <KeysPage /> : <AuditPage />;
    default:
      return (
        <main id="main" tabIndex={-1} class="page">
          <h1>Not found</h1>
          <p>
            There is no page here. <a href={href.cameras()}>Go to the cameras</a>.
          </p>
        </main>
      );
  }
}

/** The admin's pages, as a refusal names them. */
const ADMIN_PAGES = { users: 'Managing users', keys: 'Managing API keys', audit: 'Reading the audit trail' };

function sectionOf(route: Route): 'cameras' | 'jobs' | 'upload' | 'users' | 'keys' | 'audit' | null {
  if (route.page === 'cameras' || route.page === 'camera') return 'cameras';
  if (route.page === 'jobs' || route.page === 'kamcheck' || route.page === 'face_log') return 'jobs';
  if (route.page === 'upload' || route.page === 'users' || route.page === 'keys' || route.page === 'audit') return route.page;
  return null;
}

function titleOf(route: Route): string {
  switch (route.page) {
    case 'cameras':
      return 'Cameras';
    case 'camera':
      return route.camera;
    case 'jobs':
      return route.kind === 'kamcheck' ? 'Tamper checks' : 'Face logs';
    case 'kamcheck':
      return 'Tamper check';
    case 'face_log':
      return 'Face log';
    case 'upload':
      return route.kind === 'kamcheck' ? 'Run a tamper check' : 'Run a face log';
    case 'users':
      return 'Users';
    case 'keys':
      return 'API keys';
    case 'audit':
      return 'Audit trail';
    default:
      return 'Not found';
  }
}

render(<App />, document.getElementById('app')!);
