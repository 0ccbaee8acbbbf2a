/*
 * The words consent notices are made of, in English, German, French, Spanish, Italian and Dutch
 * (and the common words of a few more languages, where they cost nothing). Regular expression
 * sources, not RegExp objects: they are handed to functions that run inside the page.
 */

/** Text about cookies, consent or privacy: what a notice says and most pages do not. */
export const NOTICE_TEXT =
  'cookie|consent|privacy|gdpr|tracking|' +
  'datenschutz|einwillig|zustimm|' + // de
  'rgpd|témoins|traceurs|confidentialité|consentement|vie privée|' + // fr
  'privacidad|consentimiento|' + // es
  'consenso|riservatezza|' + // it
  'toestemming|privacybeleid|privacyverklaring|' + // nl
  'ciasteczk|prywatno|souhlas|samtyck|samtykke|evästee'; // pl, cs, sv, da, fi

/*
 * Labels of the controls a notice holds, matched against a control's whole label once it is
 * lower-cased and stripped of punctuation, so that "Accept all cookies" is an accept and
 * "Do not accept" is not. Refusals are tried first.
 */

/** Refuses everything the user may refuse, or keeps to what the site needs to work. */
export const REJECT_LABEL = `^(?:${[
  '(?:i )?(?:reject|decline|deny|refuse|disagree)(?: all| optional| non[ -]?essential| additional)?(?: cookies)?',
  "(?:do not|don't|dont) (?:accept|agree|allow|consent)",
  'no,? thanks?',
  'continue without (?:accepting|agreeing|consent|consenting)',
  '(?:strictly )?(?:necessary|essential|required)(?: cookies)?',
  '.*(?:only|just).*(?:necessary|essential|required).*',
  '.*(?:necessary|essential|required).*only',
  '(?:alle )?(?:ablehnen|verweigern)',
  'nicht (?:akzeptieren|zustimmen|einverstanden)',
  '.*nur.*(?:notwendig|essenziell|erforderlich).*',
  '(?:tout )?refuser(?: tout)?',
  'je refuse',
  'continuer sans accepter',
  'non merci',
  '.*(?:uniquement|seulement).*(?:nécessaires|essentiels).*',
  '.*(?:nécessaires|essentiels).*uniquement',
  '(?:rechazar|denegar)(?: todas?| todo)?(?: las cookies)?',
  '.*(?:solo|sólo|únicamente).*(?:necesarias|esenciales).*',
  'rifiuta(?:re)?(?: tutti| tutto)?',
  '.*solo.*(?:necessari|tecnici|essenziali).*',
  'continua senza accettare',
  '(?:alles? )?(?:weigeren|afwijzen)',
  '.*(?:alleen|enkel).*(?:noodzakelijk|essentiële|functionele).*',
].join('|')})$`;

/** Only acknowledges the notice: nothing is consented to beyond what the notice says it does anyway. */
export const ACKNOWLEDGE_LABEL =
  '^(?:ok|okay|ok got it|got it|understood|i understand|close|dismiss|×|✕|x|' +
  'verstanden|schließen|schliessen|' +
  "compris|j'ai compris|jai compris|fermer|" +
  'entendido|de acuerdo|cerrar|' +
  'ho capito|capito|chiudi|' +
  'begrepen|sluiten|oké)$';

/** Consents: never clicked, but it tells a notice apart from any other box with a close button. */
export const ACCEPT_LABEL =
  '^(?:(?:ok )?(?:i )?(?:accept|agree|allow)(?: all| and continue| and close)?(?: cookies)?|yes,? i agree|' +
  '(?:alle )?(?:akzeptieren|annehmen|zulassen|erlauben)|(?:alle )?cookies (?:akzeptieren|zulassen|erlauben)|zustimmen|einverstanden|ich stimme zu|' +
  "(?:tout )?accepter(?: tout| et continuer| et fermer)?|j'accepte|jaccepte|" +
  'aceptar(?: todas?| todo)?(?: las cookies)?|acepto|' +
  'accetta(?: tutti| tutto)?|accetto|' +
  '(?:alles? )?accepteren|akkoord|(?:alles? )?toestaan)$';
