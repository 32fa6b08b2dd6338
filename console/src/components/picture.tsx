// A picture from a signed link, or a labelled empty frame when there is none.
import { useState } from 'preact/hooks';

export function Picture({ src, alt, caption, href }: { src: string | null | undefined; alt: string; caption?: string; href?: string }) {
  const [broken, setBroken] = useState(false);
  const body =
    src && !broken ? (
      <img src={src} alt={alt} decoding="async" onError={() => setBroken(true)} />
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
