/**
 * A value of the environment the sandbox refuses to start with (`setting`, the variable's name): the
 * user's mistake, told in one line as a usage error, never blamed on the database. main.ts knows it by
 * its class, not by its message's words. Its own module so that every reader of a setting (origins,
 * hosts, waits, the pool) throws it without importing the sandbox that reads them.
 */
export class SettingRefused extends Error {
  readonly setting: string;
  constructor(setting: string, why: string) {
    super(`${setting} ${why}`);
    this.name = 'SettingRefused';
    this.setting = setting;
  }
}
