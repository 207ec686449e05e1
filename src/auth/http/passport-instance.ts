import passport from 'passport';

/** A passport Authenticator of one application's own, so that strategies never leak between apps. */
export type PassportInstance = InstanceType<typeof passport.Passport>;

export function newPassportInstance(): PassportInstance {
  return new passport.Passport();
}
