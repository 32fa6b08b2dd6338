// Stream passwords are stored, never shown again: every answer, log line and event carries the
// URL with the password replaced. Worker processes use this too (ffmpeg's messages name the URL).

/** What a password is shown as. */
export const REDACTED = '***';

/** The URL with its password replaced by REDACTED (user names stay: they tell which account). */
export function redactSourceUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return redactText(text);
  }
  if (!url.password) return text;
  url.password = REDACTED;
  return url.toString();
}

/** Every `user:password@` of a text (an ffmpeg message) with the password replaced. */
export function redactText(text: string): string {
  return text.replace(/(\/\/[^/\s:@]*:)[^@\s/]*@/g, `$1${REDACTED}@`);
}
