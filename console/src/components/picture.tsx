// A picture from a signed link, or a labelled empty frame when there is none.
import { useState } from 'preact/hooks';

/** `lazy`: loaded only when near the view (the cards of a long list). */
export function Picture({ src, alt, caption, href, lazy = false }: { src: string | null | undefined; alt: string; caption?: string; href?: string; lazy?: boolean }) {
  // The link that failed: a later one (a new capture, a new reference) is tried again.
  const [failed, setFailed] = useState<string | null>(null);
  const broken = !!src && src === failed;
  const body =
    src && !broken ? (
      <img src={src} alt={alt} decoding="async" loading={lazy ? 'lazy' : 'eager'} onError={() => setFailed(src)} />
    ) : (
      <div class="picture-none">{src ? 'Picture not available' : 'No picture'}</div>
    );
  return (
    <figure class="picture">
      {href && src && !broken ? (
        <a href={href} target="_blank" rel="noopener">
          {body}
        </a>
      ) : (
        body
      )}
      {caption && <figcaption>{caption}</figcaption>}
    </figure>
  );
}
