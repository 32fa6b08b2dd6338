// The operator console: one page at `/`, its views in the URL's fragment. It signs in with the
// appliance's credentials (a session cookie) and then reads the same REST API as every client.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { currentSession, loadSession, signOut, whenSignedOut, type Session } from './api.js';
import { ErrorNotice, Loading } from './components/notice.js';
import { CameraPage } from './pages/camera.js';
import { CamerasPage } from './pages/cameras.js';
import { FaceLogPage } from './pages/face-log.js';
import { JobsPage } from './pages/jobs.js';
import { KamcheckJobPage } from './pages/kamcheck-job.js';
import { SignIn } from './pages/sign-in.js';
import { UploadPage } from './pages/upload.js';
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
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to the content
      </a>
      <header class="topbar">
        <a class="brand" href={href.cameras()}>
          <img src="/console/icon.svg" alt="" width={24} height={24} />
          <span>Video analytics</span>
        </a>
        <nav aria-label="Main">
          <a href={href.cameras()} aria-current={section === 'cameras' ? 'page' : undefined}>
            Cameras
          </a>
          <a href={href.jobs('kamcheck')} aria-current={section === 'jobs' ? 'page' : undefined}>
            Jobs
          </a>
          <a href={href.upload('kamcheck')} aria-current={section === 'upload' ? 'page' : undefined}>
            Run a job
          </a>
        </nav>
        <div class="user">
          <span class="muted" title={`Session until ${new Date(session.expires_at).toLocaleString()}`}>
            {session.user}
          </span>
          <button type="button" class="link-button" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      <Page route={route} />
    </>
  );
}

function Page({ route }: { route: Route }) {
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
      return <UploadPage kind={route.kind} key={route.kind} />;
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

function sectionOf(route: Route): 'cameras' | 'jobs' | 'upload' | null {
  if (route.page === 'cameras' || route.page === 'camera') return 'cameras';
  if (route.page === 'jobs' || route.page === 'kamcheck' || route.page === 'face_log') return 'jobs';
  if (route.page === 'upload') return 'upload';
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
    default:
      return 'Not found';
  }
}

render(<App />, document.getElementById('app')!);
