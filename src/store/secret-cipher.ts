import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { OrkaError } from "../util/errors.ts";

/** AES-256-GCM with a key kept in a local file (mode 0600), so Secrets are not plain text on disk. */
export class SecretCipher {
  private readonly key: Buffer;

  constructor(key: Buffer) {
    this.key = key;
  }

  static fromKeyFile(path: string): SecretCipher {
    if (!existsSync(path)) writeFileSync(path, randomBytes(32).toString("base64"), { mode: 0o600, flag: "wx" });
    return new SecretCipher(Buffer.from(readFileSync(path, "utf8").trim(), "base64"));
  }

  encrypt(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    return ["v1", iv.toString("base64"), cipher.getAuthTag().toString("base64"), body.toString("base64")].join(":");
  }

  decrypt(sealed: string): string {
    const [version, iv, tag, body] = sealed.split(":");
    if (version !== "v1") throw new OrkaError("internal", "unknown secret encoding");
    const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(iv, "base64"));
    decipher.setAuthTag(Buffer.from(tag, "base64"));
    return Buffer.concat([decipher.update(Buffer.from(body, "base64")), decipher.final()]).toString("utf8");
  }
}
