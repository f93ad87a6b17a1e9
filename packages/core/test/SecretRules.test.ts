import { describe, expect, it } from "@effect/vitest"
import { sampleToken, type TokenFormat, tokenFormats } from "../src/internal/secrets/providers.js"
import * as Secrets from "@spillway/core/Secrets"

// Example credentials are generated here (seeded) or built by concatenation,
// so this file holds no literal token for secret scanners to flag.

const seeded = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const random = seeded(20240901)

const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
const LOWER = "abcdefghijklmnopqrstuvwxyz"
const DIGITS = "0123456789"
const ALNUM = UPPER + LOWER + DIGITS
const HEX = "0123456789abcdef"
const B64 = ALNUM + "+/"
const B64URL = ALNUM + "_-"

/** A random string of `length` characters from `alphabet`, with one of its digits every fourth character so it always looks random. */
const gen = (alphabet: string, length: number): string => {
  let out = ""
  for (let i = 0; i < length; i++) {
    const digits = alphabet.replace(/[^0-9]/g, "")
    const from = i % 4 === 1 && digits.length > 0 ? digits : alphabet
    out += from[Math.floor(random() * from.length)]
  }
  return out
}

const stars = (text: string) => "*".repeat(Buffer.byteLength(text, "utf8"))

interface Hit {
  readonly text: string
  readonly expected: string
  readonly secrets: ReadonlyArray<string>
}

/** A text with the given secret parts, and the text expected once they are masked. */
const hide = (text: string, ...secrets: Array<string>): Hit => {
  let expected = text
  for (const secret of secrets) {
    expect(expected.includes(secret), secret).toBe(true)
    expected = expected.split(secret).join(stars(secret))
  }
  return { text, expected, secrets }
}

/** Builds `prefix + body` texts where the whole token is the secret. */
const token = (before: string, value: string, after = ""): Hit => hide(before + value + after, value)

interface Case {
  readonly hit: ReadonlyArray<Hit>
  readonly keep: ReadonlyArray<string>
}

const uuidOf = () => `${gen(HEX, 8)}-${gen(HEX, 4)}-${gen(HEX, 4)}-${gen(HEX, 4)}-${gen(HEX, 12)}`

/** Cases of the rules that find a token by what sits next to it: a service's name, a delimiter, a user id's base64. */
const serviceCases = (): Record<string, Case> => ({
  "service-token-okta": {
    hit: [token("okta token - '", `00${gen(B64URL, 40)}`, "'"), token("[okta] api token ", `00${gen(ALNUM, 40)}`)],
    keep: ["okta domain: dev-123456.okta.com", `okta token - '00${"x".repeat(40)}'`, `okta session ${gen(ALNUM, 30)}`]
  },
  "service-token-zendesk": {
    hit: [token("zendesk api token: ", gen(ALNUM, 40))],
    keep: ["zendesk ticket 123456 closed", `zendesk token: ${gen(ALNUM, 39)}`]
  },
  "service-token-jira": {
    hit: [token("jira ", gen(ALNUM, 24), "   "), token("JIRA_API_TOKEN = '", gen(ALNUM, 24), "'")],
    keep: ["jira issue PROJ-1234 was closed", `jira ${"ab".repeat(12)}`, "jira hereisavalidsubdomain.atlassian.net"]
  },
  "service-token-twilio": {
    hit: [token("twilio auth token: ", gen(HEX, 32))],
    keep: [`twilio account sid AC${gen(HEX, 32)}`, "twilio sms sent to +15550100"]
  },
  "service-token-mailgun": {
    hit: [token("mailgun key: ", `${gen(HEX, 32)}-${gen(HEX, 8)}-${gen(HEX, 8)}`), token("mailgun '", gen(ALNUM, 72), "'")],
    keep: ["mailgun domain: mg.example.com", "mailgun 'key-here'"]
  },
  "service-token-paypal": {
    hit: [token("paypal client secret: ", `E${gen(B64URL, 79)}`)],
    keep: ["paypal checkout completed for order 12345", `paypal ${"A".repeat(50)}`]
  },
  "service-token-assemblyai": {
    hit: [token("Using assemblyai Key=", gen(LOWER + DIGITS, 32))],
    keep: ["assemblyai transcript ready", `assemblyai key ${gen(UPPER, 32)}`]
  },
  "service-token-alibaba": {
    hit: [token("alibaba secret: ", gen(ALNUM, 30))],
    keep: ["alibaba region cn-hangzhou", `alibaba id ${gen(ALNUM, 29)}`]
  },
  "service-token-railway": {
    hit: [(() => {
      const id = uuidOf()
      return token("railway token = '", id, "'")
    })()],
    keep: ["railway up --service web", "railway = '00000000-0000-0000-0000-000000000000'"]
  },
  "service-token-hubspot": {
    hit: [token("const hs = new HubSpotAPI(\"", uuidOf(), "\")")],
    keep: ["hubspot contact created", `hubspot portal ${gen(DIGITS, 8)}`]
  },
  "service-token-vercel": {
    hit: [token("vercel token: ", gen(ALNUM, 24))],
    keep: ["vercel deploy --prod", `vercel project ${gen(LOWER, 24)}`]
  },
  "service-token-asana": {
    hit: [token("asana Key=", `1/${gen(DIGITS, 16)}:${gen(ALNUM, 32)}`)],
    keep: ["asana task 1/2 done", "asana project 1204567890123456"]
  },
  "service-token-cloudflare": {
    hit: [token("cloudflare global key ", gen(HEX, 37))],
    keep: ["cloudflare: abcdef1234567890abcdef1234567890abcdef0 / user@example.com", "cloudflare zone example.com"]
  },
  "airtable-personal-access-token": {
    hit: [token("AIRTABLE_TOKEN=\"", `pat${gen(ALNUM, 14)}.${gen(HEX, 64)}`, "\""), token("Authorization: Bearer ", `pat${gen(ALNUM, 14)}.${gen(HEX, 64)}`)],
    keep: ["export PATH=/usr/bin", "{\"path\": \"/api\"}", `token=pat${gen(ALNUM, 14)}.${gen(HEX, 40)}`, `key=pat${gen(ALNUM, 14)}.${gen(HEX, 64)}x`]
  },
  "discord-bot-token": {
    hit: [
      token("", `${Buffer.from("1098765432109876543").toString("base64url")}.${gen(B64URL, 6)}.${gen(B64URL, 38)}`),
      token("DISCORD_BOT=", `${Buffer.from("812345678901234567").toString("base64url")}.${gen(B64URL, 6)}.${gen(B64URL, 27)}`)
    ],
    keep: [
      "MTAwMDAwMDAwMDAwMDAwMDAw.abcdef.ghi",
      `MTAw.${gen(B64URL, 6)}.${gen(B64URL, 30)}`,
      `ZmFrZTEyMzQ1Njc4OTAxMjM0NTY.${gen(B64URL, 6)}.${gen(B64URL, 30)}`,
      `MTA5ODc2NTQzMjEwOTg3NjU0Mw.${gen(B64URL, 6)}.${"a".repeat(30)}`
    ]
  }
})

const keyLines = [gen(B64, 64), gen(B64, 64), gen(B64, 24) + "=="]
const jwtHeader = Buffer.from(JSON.stringify({ alg: "HS256", typ: "JWT" })).toString("base64url")
const jwtPayload = Buffer.from(JSON.stringify({ sub: "1234567890", name: "build-bot", iat: 1716239022 })).toString("base64url")
const jwt = `${jwtHeader}.${jwtPayload}.${gen(B64URL, 43)}`
const basicValue = Buffer.from("deploy:" + gen(ALNUM, 16)).toString("base64")
const dockerAuth = Buffer.from("robot:" + gen(ALNUM, 24)).toString("base64")
const storageKey = gen(B64, 86) + "=="
const sasSig = gen(B64, 40) + "%2B" + gen(ALNUM, 3) + "%3D"
const urlPassword = gen(ALNUM, 20)
const value = gen(ALNUM + "!#%", 24)
const spaced = gen(ALNUM + " !#%", 28)
const uuid = () => `${gen(HEX, 8)}-${gen(HEX, 4)}-4${gen(HEX, 3)}-a${gen(HEX, 3)}-${gen(HEX, 12)}`
const pemBody = (lines: ReadonlyArray<string>) => lines.join("\n")

// Cases for the rules that are not a prefix and a body.
const cases: Record<string, Case> = {
  "private-key": {
    hit: [
      hide(`key:\n-----BEGIN RSA PRIVATE KEY-----\n${pemBody(keyLines)}\n-----END RSA PRIVATE KEY-----\ndone\n`, ...keyLines),
      hide(
        `-----BEGIN OPENSSH PRIVATE KEY-----\r\n${keyLines.join("\r\n")}\r\n-----END OPENSSH PRIVATE KEY-----\r\n`,
        ...keyLines
      ),
      hide(`-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n${keyLines[0]}\n-----END PGP PRIVATE KEY BLOCK-----`, keyLines[0]),
      hide(`-----BEGIN ENCRYPTED PRIVATE KEY-----\n${keyLines[0]}\n${keyLines[1]}`, keyLines[0], keyLines[1]),
      hide(`private_key: |\n  -----BEGIN EC PRIVATE KEY-----\n  ${keyLines[0]}\n  ${keyLines[2]}\n  -----END EC PRIVATE KEY-----\n`, keyLines[0], keyLines[2])
    ],
    keep: [
      `-----BEGIN CERTIFICATE-----\n${keyLines[0]}\n-----END CERTIFICATE-----\n`,
      `-----BEGIN PUBLIC KEY-----\n${keyLines[1]}\n-----END PUBLIC KEY-----\n`,
      `src/keys.ts:12:const header = "-----BEGIN RSA PRIVATE KEY-----"\nsrc/keys.ts:13:export const footer = "-----END RSA PRIVATE KEY-----"\n`,
      `-----BEGIN PRIVATE KEY-----\nnot a key line\nDone`
    ]
  },
  "private-key-inline": {
    hit: [
      hide(
        `{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n${keyLines.join("\\n")}\\n-----END PRIVATE KEY-----\\n"}`,
        `\\n${keyLines.join("\\n")}\\n`
      ),
      hide(`KEY="-----BEGIN RSA PRIVATE KEY----- ${keyLines.join(" ")} -----END RSA PRIVATE KEY-----"`, ` ${keyLines.join(" ")} `)
    ],
    keep: [`const header = "-----BEGIN RSA PRIVATE KEY-----\\n" +`, `-----BEGIN PRIVATE KEY----- (a marker, nothing more)`]
  },
  "kubernetes-secret-data": (() => {
    const b64 = (text: string) => Buffer.from(text).toString("base64")
    const config = b64(`{"apiKey": "${gen(ALNUM, 24)}", "region": "us-east-1"}`)
    const url = b64(`postgres://admin:${gen(ALNUM, 12)}@db.example.com:5432/app`)
    const user = b64("admin")
    const bundle = b64(gen(ALNUM, 900))
    return {
      hit: [
        // as kubectl get -o yaml prints a Secret: data first, keys that name nothing secret
        hide(`apiVersion: v1\ndata:\n  config.json: ${config}\n  username: ${user}\n  enabled: true\nkind: Secret\nmetadata:\n  name: app\n`, config, user),
        // a list of them, each data: indented under its item
        hide(`items:\n- apiVersion: v1\n  data:\n    db-url: ${url}\n  kind: Secret\n  metadata:\n    name: x\n`, url),
        // a value longer than a key block's line
        hide(`data:\n  bundle: ${bundle}\n  token: ${url}\n`, bundle, url)
      ],
      keep: [
        // a ConfigMap's plain values are not base64 of text
        "kind: ConfigMap\ndata:\n  LOG_LEVEL: debug\n  mode: prod\n  replicas: \"3\"\n  feature: true\n",
        "metadata:\n  name: " + gen(LOWER, 20) + "\n",
        `<img src="data:image/png;base64,${b64(gen(ALNUM, 30))}">`,
        `config: {data: ${url}}`
      ]
    }
  })(),
  "kubernetes-secret-string-data": {
    hit: [
      token("kind: Secret\nstringData:\n  password: ", "correct horse battery staple", "\ntype: Opaque\n"),
      token("stringData:\n  api-key: ", value, "\n")
    ],
    keep: ["stringData: {}\n", "# stringData:\nkey: value\n"]
  },
  "mysql-password-option": {
    hit: [
      token("mysql -u root -p", value, " app"),
      token("$ mysqldump -h db -u backup -p'", "S3cr3t Pass", "' --all-databases > all.sql"),
      token("docker exec db mariadb -uroot -p", value, " -e 'show databases'"),
      token("mysqladmin -p", value, " status; ls -p"),
      token("/usr/bin/mysql -p\"", value, "\" app")
    ],
    keep: [
      "mysql -u root -p app",
      "mysql -u root -p -h db",
      "mysql -h db -P3306 -u app",
      "mysql -u root -p\"$DB_PASSWORD\" app",
      "mysql -u root -p${MYSQL_ROOT_PASSWORD} app",
      "mkdir -pv /var/lib/mysql-files",
      "mysql --protocol=tcp -u app",
      "mysql -u app -p; ssh -p2222 host"
    ]
  },
  "putty-private-key": {
    hit: [
      hide(
        `PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nPrivate-Lines: 2\n${keyLines[0]}\n${keyLines[2]}\nPrivate-MAC: ${gen(HEX, 40)}\n`,
        keyLines[0],
        keyLines[2]
      )
    ],
    keep: ["Private-Lines: 14\nand then the rest of the page\n"]
  },
  "private-key-base64": {
    hit: [(() => {
      const encoded = Buffer.from(`-----BEGIN RSA PRIVATE KEY-----\n${keyLines.join("\n")}\n-----END RSA PRIVATE KEY-----\n`).toString("base64")
      return token("  tls.key: ", encoded)
    })()],
    keep: ["  ca.crt: " + Buffer.from(`-----BEGIN CERTIFICATE-----\n${keyLines[0]}\n-----END CERTIFICATE-----\n`).toString("base64")]
  },
  "aws-access-key-id": {
    hit: [token("aws_access_key_id = ", "AKIA" + gen(UPPER + DIGITS, 16)), token("\"AccessKeyId\": \"", "ASIA" + gen(UPPER + DIGITS, 16), "\",")],
    keep: ["AKIA" + "EXAMPLE", "XAKIA" + gen(UPPER + DIGITS, 16), "AKIA" + gen(UPPER + DIGITS, 20), "AKIA" + "IOSFODNN7" + "EXAMPLE"]
  },
  "aws-secret-access-key": {
    hit: [
      token("aws_secret_access_key = ", gen(B64, 40)),
      token("export AWS_SECRET_ACCESS_KEY=", gen(B64, 40)),
      token("\"SecretAccessKey\": \"", gen(B64, 40), "\",")
    ],
    keep: ["aws_secret_access_key = ${AWS_SECRET_ACCESS_KEY}", "aws_secret_access_key = " + gen(B64, 30)]
  },
  "azure-storage-account-key": {
    hit: [
      hide(
        `DefaultEndpointsProtocol=https;AccountName=build;AccountKey=${storageKey};EndpointSuffix=core.windows.net`,
        storageKey
      ),
      hide(`Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=${storageKey}`, storageKey)
    ],
    keep: ["AccountKey=${STORAGE_KEY}", "AccountKey=short"]
  },
  "azure-sas-signature": {
    hit: [hide(`https://build.blob.core.windows.net/logs/a.txt?sv=2022-11-02&se=2030-01-01&sr=b&sp=r&sig=${sasSig}&x=1`, sasSig)],
    keep: ["https://example.com/?design=abcdefghijklmnopqrstuvwxyz", "sig=short"]
  },
  "azure-sas-token": {
    hit: [
      hide(
        `BlobEndpoint=https://b.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=b&sig=${sasSig};x`,
        `sv=2022-11-02&ss=b&sig=${sasSig}`
      )
    ],
    keep: ["SharedAccessSignature is documented elsewhere"]
  },
  "azure-ad-client-secret": {
    hit: [(() => {
      const secret = "Q~" + gen(ALNUM + "_~.-", 34)
      return hide(`AZURE_CLIENT_SECRET=${gen(ALNUM, 3)}8${secret} `, secret)
    })()],
    keep: ["press Q~ to quit", "xQ~" + gen(ALNUM, 34)]
  },
  "azure-devops-pat": {
    hit: [token("AZURE_DEVOPS_EXT_PAT=", gen(ALNUM, 76) + "AZDO" + gen(ALNUM, 4))],
    keep: ["AZDO" + gen(ALNUM, 4), gen(ALNUM, 20) + "AZDO" + gen(ALNUM, 4)]
  },
  "terraform-cloud-token": {
    hit: [(() => {
      const secret = ".atlasv1." + gen(B64URL, 67)
      return hide(`TF_TOKEN_app_terraform_io=${gen(ALNUM, 14)}${secret}`, secret)
    })()],
    keep: ["x.atlasv1.short"]
  },
  "twilio-api-key": {
    hit: [token("TWILIO_API_KEY=", "SK" + gen(HEX, 32))],
    keep: ["TASK" + gen(HEX, 32), "SK" + gen(HEX, 20), "SK" + "0".repeat(32)]
  },
  "openai-legacy-api-key": {
    hit: [token("", "sk-" + gen(ALNUM, 20) + "T3Blbk" + "FJ" + gen(ALNUM, 20))],
    keep: ["sk-" + "abcdefghij".repeat(5), "disk-" + gen(ALNUM, 20) + "T3Blbk" + "FJ" + gen(ALNUM, 20)]
  },
  "telegram-bot-token": {
    hit: [(() => {
      const secret = "AA" + gen(B64URL, 33)
      return hide(`curl https://api.telegram.org/bot1234567890:${secret}/getMe`, secret)
    })()],
    keep: ["time 12:30:AA" + gen(B64URL, 33), "ratio 1:AA" + gen(B64URL, 33)]
  },
  "mailchimp-api-key": {
    hit: [(() => {
      const secret = gen(HEX, 32)
      return hide(`MAILCHIMP_API_KEY=${secret}-us21`, `${secret}-us21`)
    })()],
    keep: ["docker run -p 80:80 image-us1", "build-" + gen(HEX, 32) + "-us21"]
  },
  "maxmind-license-key": {
    hit: [token("MAXMIND_LICENSE_KEY=", gen(ALNUM, 6) + "_" + gen(ALNUM, 29) + "_mmk")],
    keep: ["cache_mmk", "x_" + gen(ALNUM, 6) + "_" + gen(ALNUM, 29) + "_mmk"]
  },
  "slack-webhook-url": {
    hit: [(() => {
      const path = `T${gen(UPPER + DIGITS, 8)}/B${gen(UPPER + DIGITS, 10)}/${gen(ALNUM, 24)}`
      return hide(`curl -X POST https://hooks.slack.com/services/${path} -d @msg.json`, path)
    })()],
    keep: ["see https://hooks.slack.com/services/ for webhooks", "https://api.slack.com/messaging/webhooks"]
  },
  "discord-webhook-url": {
    hit: [(() => {
      const secret = gen(B64URL, 68)
      return hide(`https://discord.com/api/webhooks/${gen(DIGITS, 18)}/${secret}`, secret)
    })()],
    keep: ["https://discord.com/api/webhooks/ are documented here"]
  },
  "teams-webhook-url": {
    hit: [(() => {
      const secret = `${uuid()}@${uuid()}/IncomingWebhook/${gen(HEX, 32)}/${uuid()}`
      return hide(`https://contoso.webhook.office.com/webhookb2/${secret}`, secret)
    })()],
    keep: ["https://contoso.webhook.office.com/webhookb2/"]
  },
  "sidekiq-credentials": {
    hit: [(() => {
      const secret = `${gen(HEX, 8)}:${gen(HEX, 8)}`
      return hide(`BUNDLE_GEMS__CONTRIBSYS__COM=${secret}`, secret)
    })()],
    keep: ["BUNDLE_GEMS__CONTRIBSYS__COM=${SIDEKIQ_CREDENTIALS}"]
  },
  "sidekiq-gem-server-url": {
    hit: [(() => {
      const secret = `${gen(HEX, 8)}:${gen(HEX, 8)}`
      return hide(`source "https://${secret}@gems.contribsys.com/" do`, secret)
    })()],
    keep: ["source \"https://gems.contribsys.com/\" do", "see https://contribsys.com/sidekiq/ for details"]
  },
  "xml-element-password": {
    hit: [(() => {
      const secret = gen(ALNUM, 14)
      return hide(`<dbPassword>\n    ${secret}\n</dbPassword>`, secret)
    })()],
    keep: ["<dbPassword>\n    ${DB_PASSWORD}\n</dbPassword>", "<password>\n  <value>secret</value>\n</password>", "<passwordPolicy>\n    strict\n</passwordPolicy>"]
  },
  "xml-element-token": {
    hit: [(() => {
      const secret = gen(B64URL, 32)
      return hide(`  <authToken>\n    ${secret}\n  </authToken>`, secret)
    })(), (() => {
      const secret = gen(HEX, 40)
      return hide(`<apiKey>\r\n${secret}\r\n</apiKey>`, secret)
    })()],
    keep: ["<authToken>\n    {{ auth_token }}\n</authToken>", "<tokenType>\n    Bearer\n</tokenType>", "<publicKey>\n    ssh-ed25519\n</publicKey>", "<key>\n  CFBundleName\n</key>"]
  },
  jwt: {
    hit: [token("id_token=", jwt), token("Cookie: session=", jwt, "; Path=/")],
    keep: [`header ${jwtHeader} only`, `${jwtHeader}.${gen(ALNUM, 20)}.${gen(ALNUM, 20)}`]
  },
  "jwt-base64": {
    hit: [token("  token: ", Buffer.from(jwt).toString("base64"))],
    keep: ["  config: " + Buffer.from(JSON.stringify({ a: 1, b: "two", c: [3, 4, 5], d: "eyJ" })).toString("base64")]
  },
  "docker-config-base64": {
    hit: [token("  .dockerconfigjson: ", Buffer.from(JSON.stringify({ auths: { "ghcr.io": { auth: dockerAuth } } })).toString("base64"))],
    keep: ["  config.json: " + Buffer.from(JSON.stringify({ credsStore: "desktop" })).toString("base64")]
  },
  "bearer-token": {
    hit: [(() => {
      const credential = gen(B64URL, 48)
      return hide(`sending request with bearer ${credential}`, credential)
    })()],
    keep: ["Bearer authentication is required", "token_type: Bearer", "Bearer XXXXXXXXXXXXXXXXXXXX"]
  },
  "basic-credentials": {
    hit: [hide(`proxy auth: Basic ${basicValue}`, basicValue)],
    keep: ["Basic settings applied", "basic usage"]
  },
  "url-credentials": {
    hit: [
      hide(`git clone https://ci:${urlPassword}@git.example.com/org/repo.git`, urlPassword),
      hide(`DATABASE_URL=postgres://app:${urlPassword}@db:5432/app`, urlPassword)
    ],
    keep: [
      "GET https://registry.npmjs.org:443/lodash/-/lodash-4.17.21.tgz",
      "postgres://app@db:5432/app",
      "https://${USER}:${PASSWORD}@git.example.com/repo.git"
    ]
  },
  "docker-config-auth": {
    hit: [hide(`{"auths":{"ghcr.io":{"auth":"${dockerAuth}"}}}`, dockerAuth)],
    keep: ["{\"auths\":{\"ghcr.io\":{\"auth\":\"${DOCKER_AUTH}\"}}}"]
  },
  "npmrc-auth": {
    hit: [
      token("//registry.npmjs.org/:_authToken=", uuid()),
      token("_auth=", Buffer.from("me:" + gen(ALNUM, 12)).toString("base64"))
    ],
    keep: ["//registry.npmjs.org/:_authToken=${NPM_TOKEN}", "_authorization=abcdefghijkl"]
  },
  "user-option": {
    // curl samples from the gitleaks rule catalogue (curl-auth-user)
    hit: [
      hide("curl --cacert ca.crt -u elastic:P@ssw0rd$1 https://localhost:9200", "P@ssw0rd$1"),
      hide("  -u developer:yqDVtkqPECriaLRi", "yqDVtkqPECriaLRi"),
      hide("curl -u \":d2LkV78zLx!t\" https://localhost:9200", "d2LkV78zLx!t"),
      hide("curl -u \"d2LkV78zLx!t:\" https://localhost:9200", "d2LkV78zLx!t"),
      hide("curl -sw '%{http_code}' -X POST --user  'johns:h0pk1ns~21s' $GItHUB_API_URL/$GIT_COMMIT --data", "h0pk1ns~21s"),
      hide("curl --user roger23@gmail.com:pQ9wTxu4Fg https://www.dropbox.com/cli_link?host_id=abcdefg -v", "pQ9wTxu4Fg"),
      hide("curl -s -v --user \"j.smith:dB2yF6@qL9vZm1P#4J\" \"https://api.contoso.org/user/me\"", "dB2yF6@qL9vZm1P#4J"),
      hide("curl --user kevin:'pRf7vG2h1L8nQkW9' -iX PATCH -H \"Content-Type: application/json\" -d", "pRf7vG2h1L8nQkW9"),
      hide("  --user c28wlsosanujy2z:qgsnai0xokrw4j1 --data grant_type=authorization_code", "qgsnai0xokrw4j1")
    ],
    keep: [
      "curl -i -u 'test:test'",
      "   curl -sL --user \"$1:$2\" \"$3\" > \"$4\"",
      "curl -u <user:password> https://test.com/endpoint",
      "curl --user neo4j:[PASSWORD] http://[IP]:7474/db/data/",
      "curl -u \"myusername\" http://localhost:15130/api/check_user/",
      "curl -u username:token",
      "curl -u \"${_username}:${_password}\"",
      "curl -k -X POST -I -u \"SRVC_JENKINS:${APPID}\"",
      "curl -u \":\" https://localhost:9200",
      "curl -sw '%{http_code}' -X POST --user '$USERNAME:$PASSWORD' $GItHUB_API_URL/$GIT_COMMIT --data",
      "curl --user \"xxx:yyy\"",
      "curl -XGET -i -u \"${{ env.ELK_ID }}:${{ build.env.ELK_PASS }}\"",
      "curl -X POST --user \"$(cat ./login.txt):$(cat ./password.txt)\"",
      "curl http://127.0.0.1:5000/file --user user:pass --digest        # digest auth",
      "   curl -X GET --insecure --user \"username:password\" \\",
      "docker run -u 1000:1000 image",
      "git push -u origin main"
    ]
  },
  ...serviceCases(),
  "generic-assignment": {
    hit: [
      token("DB_PASSWORD=", value),
      token("  password: ", value),
      token("--api-key=", value, " --verbose"),
      token("client_secret = ", value, " # rotated"),
      token("export SECRET_TOKEN=", value),
      token("password=", gen(HEX, 32)),
      token("TOKEN ::= ", value),
      // personal access tokens under lower and camel case keys (Azure DevOps PATs: 52 lower-case base32 characters)
      token("azure_pat = \"", gen("abcdefghijklmnopqrstuvwxyz234567", 52), "\""),
      token("ado_pat=", gen("abcdefghijklmnopqrstuvwxyz234567", 52)),
      token("  gitlab-pat: ", value),
      token("{\"devopsPat\": \"", gen("abcdefghijklmnopqrstuvwxyz234567", 52), "\"}"),
      token("API_TOKEN := ", value),
      token("PASSWORD ?= ", value),
      token("$password .= \"", value, "\";"),
      token("'password' => '", value, "',"),
      token("{\"client_secret\": \"", spaced, "\"}"),
      token("password = '", spaced, "'"),
      token("API_KEY=\"", value, "\""),
      token("token := \"", value, "\""),
      token("db_password = `", value, "`"),
      token("<password>", value, "</password>"),
      token("<ns:Password type=\"text\">", value, "</ns:Password>"),
      token("<add key=\"ClearTextPassword\" value=\"", value, "\" />"),
      token("<entry key=\"api.token\">", value, "</entry>"),
      token("props.setProperty(\"db.password\", \"", value, "\");"),
      token("define('DB_PASSWORD', '", value, "');"),
      token("os.Setenv(\"GITHUB_TOKEN\", \"", value, "\")"),
      token("headers[\"X-Api-Key\"] = \"", value, "\""),
      token("var apiKey string = \"", value, "\""),
      token("const apiToken: string = \"", value, "\";"),
      token("let secret_key: &str = \"", value, "\";"),
      token("password: str = \"", value, "\""),
      token("private static final String API_KEY = \"", value, "\";"),
      token("mysql --password ", value, " app"),
      token("ENV DB_PASSWORD ", value),
      token("set -x API_TOKEN ", value),
      token("machine api.example.com login me password ", value),
      token("Authorization: Token ", value),
      token("Authorization: Bearer ", value),
      token("\"Authorization\": \"Splunk ", value, "\""),
      token("curl -H \"Authorization: SSWS ", value, "\" https://example.okta.com"),
      token("Authorization: ", uuid()),
      token("{\"env\": \"DB_PASSWORD=", value, "\\nDB_HOST=db\"}"),
      token("\"cmd\": \"login --token \\\"", value, "\\\" --user bot\""),
      token("  password: ", "UyFCXCpkJHpEc2I9"),
      token("HEROKU_API_KEY=", uuid()),
      token("\"client_secret\" : \"", gen(HEX, 64), "\","),
      token("DD_API_KEY=", gen(HEX, 32)),
      token(" utils.GetEnvOrDefault(\"api_token\", \"", uuid(), "\")"),
      token("-H \"apikey: ", uuid(), "\""),
      token("-H \"Token: ", gen(HEX, 16), "\""),
      token("mySecretString=", gen(ALNUM, 30)),
      token("todo_secret_do_not_commit = ", gen(ALNUM, 30)),
      token("\"user_auth\": \"", Buffer.from(`johndoe:${uuid()}`).toString("base64"), "\""),
      token("private-key: ", gen(ALNUM + "-_.=", 100)),
      token("creds = ", gen(ALNUM, 30)),
      token("jdbc:postgresql://db/app?user=app&password=", value, "&ssl=true"),
      token("Server=db;Database=app;User Id=sa;Password=", value, ";"),
      token("level=info user=bob password=", value, " status=ok"),
      token("- password: ", value),
      token("PGPASSWORD=", "s3cr3t!x")
    ],
    keep: [
      "password=changeme",
      // words that hold `pat` name paths and patterns, whatever follows them
      "log_path: /var/log/app/" + gen(LOWER, 30) + ".log",
      "file_pattern = \"" + gen(LOWER, 40) + "\"",
      "compat: " + gen(LOWER, 40),
      "Pat Smith " + gen(LOWER, 12),
      "token=" + gen(HEX, 40),
      "token=" + gen(HEX, 12),
      "secret=550e8400-e29b-41d4-a716-446655440000",
      "token=sha512-" + gen(B64, 86) + "==",
      "password=${DB_PASSWORD}",
      "api_key=$API_KEY",
      "tokens=123456789012",
      "password=**********",
      "password: <your-password>",
      "secret_enabled=true",
      "\"password\": \"changeme\"",
      "\"api_key\": \"${API_KEY}\"",
      "\"secret\": \"550e8400-e29b-41d4-a716-446655440000\"",
      "token: \"" + gen(HEX, 40) + "\"",
      "\"password\": \"\"",
      "secret_length = X25519.secret_length",
      "password = var.db_password",
      "tokenizer=cl100k_base",
      "passwordField = document.getElementById(\"pw\")",
      "api_key = os.environ[\"API_KEY\"]",
      "token = process.env.GITHUB_TOKEN",
      "password: ${DB_PASSWORD}",
      "token: ${{ secrets.GITHUB_TOKEN }}",
      "api_key: \"{{ .Values.apiKey }}\"",
      "password={{ vault_password }}",
      "hf_token = \"ADD_YOUR_HUGGING_FACE_TOKEN_HERE\"",
      "\"max_tokens\": 4096, \"prompt_tokens\": 1234",
      "token_type: \"bearer_token_value\"",
      "password authentication failed for user \"app\"",
      "Set the API_KEY environment variable, see https://example.com/docs#api-key",
      "level=info msg=\"token refreshed\" token_id=tok_1234 expires_in=3600",
      "Authorization: Bearer",
      "Authorization: Token **********",
      "Authorization: Bearer <Openverse API token>",
      "Authorization: basic {base64(email:password[\\n])}",
      "Authorization: Bearer $API_KEY",
      "Authorization: Bearer $(gcloud auth print-access-token)",
      // false positives from the gitleaks rule catalogue (generic-api-key)
      "client_vpn_endpoint_id = aws_ec2_client_vpn_endpoint.client-vpn-endpoint.id",
      "\"accessor\":\"rA1wk0Y45YCufyfq\",",
      "report_access_id: e8e4df51-2054-49b0-ab1c-516ac95c691d",
      "accessibilityYesOptionId = \"0736f5ef-7e88-499a-80cc-90c85d2a5180\"",
      "this.ultraPictureBox1.Name = \"ultraPictureBox1\";",
      "COMMUNICATION_API_VERSION=rc0.13.0_20230412_0712-SNAPSHOT",
      "MantleAPI_version=9a038989604e8da62ecddbe2094b16ce1b778be1",
      "apiUrl=apigee.corpint.com",
      "X-API-Name\": \"NRG0-Hermes-INTERNAL-API\",",
      "author = \"james.fake@ymail.com\",",
      "X-MS-Exchange-Organization-AuthSource: sm02915.int.contoso.com",
      "Authentication-Results: 5h.ca.iphmx.com",
      "withCredentials([usernamePassword(credentialsId: '29f63271-dc2f-4734-8221-5b31b5169bac', usernameVariable: 'USERNAME', passwordVariable: 'PASSWORD')]) {",
      "credentialsId: 'ff083f76-7804-4ef1-80e4-fe975bb9141b'",
      "jobCredentialsId: 'f4aeb6bc-2a25-458a-8111-9be9e502c0e7'",
      "  \"credentialId\": \"B9mTcFSck2LzJO2S3ols63\",",
      "\tCREDENTIALS_ID = \"K8S_CRED\"",
      "dev.credentials.url=dev-lb1.api.f4ke.com:5215",
      "keyword: \"Befaehigung_P2\"",
      "public_key = \"9Cnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit\"",
      "pub const X509_pubkey_st = struct_X509_pubkey_st;",
      "|| pIdxKey->default_rc==0",
      "primaryKey=" + gen(ALNUM + "-_.=", 30),
      "foreignKey=" + gen(ALNUM + "-_.=", 30),
      "key_down_event=" + gen(ALNUM + "-_.=", 30),
      "issuerKeyHash=" + gen(ALNUM + "-_.=", 30),
      "<entry key=\"jetbrains.mps.v8_elimination\" value=\"executed\" />",
      "IceSSL.KeyFile=s_rsa1024_priv.pem",
      "\"bucket_key\": \"SalesResults-1.2\"",
      "<key tag=\"SecurityIdentifier\" name=\"SecurityIdentifier\" type=\"STRING\" />",
      "schemaKey = 'DOC_Vector_5_32'",
      "sequenceKey = \"18\"",
      "app.keystore.file=env/cert.p12",
      "-DKEYTAB_FILE=/tmp/app.keytab",
      "\tdoc.Security.KeySize = PdfEncryptionKeySize.Key128Bit;",
      "o.keySelector=n,o.haKey=!1,",
      "                                \"key_name\": \"prod5zyxlmy-cmk\",",
      "                                \"kms_key_id\": \"555ea4a3-d53a-4412-9c66-3a7cb667b0d6\",",
      "\t\"key_vault_name\": \"web21prqodx24021\",",
      "const validKeyChars = \"0123456789abcdefghijklmnopqrstuvwxyz_-.\"",
      "const keyStr = \"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789\"",
      "key_length = XSalsa20.key_length",
      "pub const SN_id_Gost28147_89_None_KeyMeshing = \"id-Gost28147-89-None-KeyMeshing\"",
      "KeyPair = X25519.KeyPair",
      "BlindKeySignatures = Ed25519.BlindKeySignatures",
      "AVEncVideoMaxKeyframeDistance, \"2987123a-ba93-4704-b489-ec1e5f25292c\"",
      "            keyPressed = kVK_Return.u16",
      "    \"Turkey Standard Time\": \"Europe/Istanbul\",",
      "PuttyPassword=0",
      "LLM_SECRET_NAME = \"NEXUS-GPT4-API-KEY\"",
      "  <UserSecretsId>79a3edd0-2092-40a2-a04d-dcb46d5ca9ed</UserSecretsId>",
      "secretSize must be >= XXH3_SECRET_SIZE_MIN",
      "#RUN --mount=type=secret,id=jfrog_secret \\",
      "#    JFROG_SECRET = $(cat /run/secrets/jfrog_secret) && \\",
      "    access_token_url='https://github.com/login/oauth/access_token',",
      "publicToken = \"9Cnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit\"",
      "<SourceFile SourceLocation=\"F:\\Extracts\\\" TokenFile=\"RTL_INST_CODE.cer\">",
      "notes            = \"Maven - io.jsonwebtoken:jjwt-jackson-0.11.2\"",
      "csrf-token=Mj2qykJO5rELyHgezQ69nzUX0i3OH67V7+V4eUrLfpuyOuxmiW9rhROG/Whikle15syazJOkrjJa3U2AbhIvUw==",
      "clientId = \"73082700-1f09-405b-80d0-3131bfd6272d\"",
      "GITHUB_API_KEY=\nDYNATRACE_API_KEY=",
      "snowflake.password=\njdbc.snowflake.url=",
      "import { chain_Anvil1_Key, chain_Anvil2_Key } from '../blockchain-tests/pallets/supported-chains/consts';",
      "SRCREV_moby = \"43fc912ef59a83054ea7f6706df4d53a7dea4d80\"",
      "LLM_API_KEY=\"\""
    ]
  }
}

// Documented samples and look-alikes of token formats, on top of the
// generated cases every format gets (samples from the gitleaks rule catalogue).
const documented: Record<string, Case> = {
  "huggingface-token": {
    hit: [
      hide("huggingface-cli login --token hf_" + "jCBaQngSHiHDRYOcsMcifUcysGyaiybUWz", "hf_" + "jCBaQngSHiHDRYOcsMcifUcysGyaiybUWz"),
      hide("-H \"Authorization: Bearer hf_" + "cYfJAwnBfGcKRKxGwyGItlQlRSFYCLphgG\"", "hf_" + "cYfJAwnBfGcKRKxGwyGItlQlRSFYCLphgG"),
      hide("DEV=1 HF_TOKEN=hf_" + "QNqXrtFihRuySZubEgnUVvGcnENCBhKgGD poetry run python app.py", "hf_" + "QNqXrtFihRuySZubEgnUVvGcnENCBhKgGD"),
      hide("use_auth_token='hf_" + "orMVXjZqzCQDVkNyxTHeVlyaslnzDJisex')", "hf_" + "orMVXjZqzCQDVkNyxTHeVlyaslnzDJisex")
    ],
    keep: [
      "- (id)hf_requiredCharacteristicTypesForDisplayMetadata;",
      "amazon.de#@#div[data-cel-widget=\"desktop-rhf_SponsoredProductsRemoteRHFSearchEXPSubsK2ClickPagination\"]",
      "                            _kHMSymptomhf_generatedByHomeAppForDebuggingPurposesKey,",
      "  M_UINT       (ServingCellPriorityParametersDescription_t,  H_PRIO,  2, &hf_servingcellpriorityparametersdescription_h_prio),",
      "        os.environ.get(\"HF_AUTH_TOKEN\",\n\t\t\"hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"),",
      "HUGGINGFACE_API_TOKEN=hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx,"
    ]
  },
  "huggingface-org-token": {
    hit: [hide("os.environ['HUGGINGFACEHUB_API_TOKEN'] = 'api_org_" + "YpfDOHSCnDkBFRXvtRaIIVRqGcXvbmhtRA'", "api_org_" + "YpfDOHSCnDkBFRXvtRaIIVRqGcXvbmhtRA")],
    keep: [
      "public static final String API_ORG_EXIST = \"APIOrganizationExist\";",
      "const api_org_controller = require('../../controllers/api/index').organizations;",
      "API_ORG_CREATE(\"https://qyapi.weixin.qq.com/cgi-bin/department/create?access_token=ACCESS_TOKEN\"),"
    ]
  },
  "groq-key": { hit: [], keep: ["GSK_API_KEY=gsk_" + "x".repeat(48)] },
  "langsmith-key": {
    hit: [],
    keep: ["LANGCHAIN_API_KEY=ls__0123456789abcdef0123456789abcdef", "lsv2_xx_0123456789abcdef0123456789abcdef_0123456789"]
  },
  "github-token": { hit: [], keep: ["ghp_" + gen(ALNUM, 20), "ghx_" + gen(ALNUM, 36), "GITHUB_TOKEN=ghp_" + "x".repeat(36)] },
  "npm-token": { hit: [], keep: ["npm_config_registry=https://registry.npmjs.org/", "npm_" + gen(ALNUM, 40)] },
  "stripe-secret-key": { hit: [token("STRIPE_KEY=", "rk_" + "prod_" + gen(ALNUM, 24))], keep: ["sk_" + "live_abc", "pk_" + "live_" + gen(ALNUM, 24)] },
  "notion-token": { hit: [token("NOTION_TOKEN=", "ntn_" + gen(DIGITS, 11) + gen(ALNUM, 35))], keep: ["ntn_" + gen(DIGITS, 5)] },
  "sourcegraph-token": { hit: [token("SRC_ACCESS_TOKEN=", "sgp_" + gen(HEX, 16) + "_" + gen(HEX, 40))], keep: ["sgp_" + "local"] },
  "easypost-key": { hit: [token("EASYPOST_API_KEY=", "EZAK" + gen(ALNUM, 54))], keep: ["EZAK" + gen(ALNUM, 10)] },
  "mailgun-api-key": { hit: [token("api:", "key-" + gen(HEX, 32))], keep: ["cache-key-" + gen(HEX, 32), "key-" + gen(HEX, 16)] },
  "openai-api-key": { hit: [], keep: ["sk-" + "proj-short", "task-proj-" + gen(ALNUM, 40)] },
  "databricks-token": { hit: [], keep: ["dapi" + gen(HEX, 10), "loadapi" + gen(HEX, 32)] }
}

/** The generated cases of a token format: samples in a few contexts; placeholders, short bodies and glued prefixes kept. */
const formatCase = (format: TokenFormat): Case => {
  const samples = [0, 1, 2].map(() => sampleToken(format, random))
  const prefix = format.prefixes[0]
  const body = samples[0].slice(prefix.length)
  const filler = body.replace(/[A-Za-z0-9]/g, body.match(/[A-Za-z0-9]/)?.[0] ?? "x")
  const keep = [prefix + filler, prefix + body.slice(0, 4)]
  // a token run on from a word is kept, unless another of the format's tokens starts inside it
  // (a Slack refresh token, `xoxe.xoxp-...`, holds a whole `xoxp-` token)
  const holdsAnother = format.prefixes.some((p) => samples[0].indexOf(p, 1) !== -1)
  if (format.notAfter === undefined && /^[A-Za-z0-9]/.test(prefix) && !holdsAnother) keep.push("x" + samples[0])
  return {
    hit: [token("export SERVICE_VALUE=", samples[0]), token("{\"value\": \"", samples[1], "\"}"), token("sent ", samples[2], " to the server")],
    keep
  }
}

const formatIds = new Set(tokenFormats.map((format) => format.id))
const allCases: Record<string, Case> = { ...cases }
for (const format of tokenFormats) {
  const extra = documented[format.id] ?? { hit: [], keep: [] }
  const generated = formatCase(format)
  allCases[format.id] = { hit: [...generated.hit, ...extra.hit], keep: [...generated.keep, ...extra.keep] }
}

/** Pattern source with escapes and character classes blanked out, to check what is left. */
const bare = (source: string): string => source.replace(/\\./g, "E").replace(/\[[^\]]*\]/g, "C")

describe("defaultRules", () => {
  it("has true and false test cases for every rule, and no cases for rules that do not exist", () => {
    const ids = Secrets.defaultRules.map((rule) => rule.id)
    expect(new Set(ids).size).toBe(ids.length)
    for (const id of ids) {
      expect(allCases[id], `test cases for ${id}`).toBeDefined()
      expect(allCases[id].hit.length, `true cases for ${id}`).toBeGreaterThan(0)
      expect(allCases[id].keep.length, `false cases for ${id}`).toBeGreaterThan(0)
    }
    expect(Object.keys(allCases).sort()).toEqual([...ids].sort())
    expect(Object.keys(documented).filter((id) => !formatIds.has(id))).toEqual([])
  })

  it("stays in latin1 space with bounded repetition, and has anchors", () => {
    for (const rule of Secrets.defaultRules) {
      for (const pattern of [rule.pattern, ...(rule.end === undefined ? [] : [rule.end])]) {
        expect(pattern.source, rule.id).not.toMatch(/\\[sSdDwWbB]/)
        expect(pattern.flags.replace("i", ""), rule.id).toBe("")
        const left = bare(pattern.source)
        expect(left, `${rule.id}: unbounded repetition`).not.toMatch(/[*+]|\{\d+,\}/)
        expect(left, `${rule.id}: bare dot`).not.toContain(".")
        expect(pattern.source, `${rule.id}: non-ASCII`).toMatch(/^[\x20-\x7e]*$/)
      }
      expect(rule.anchors?.length ?? 0, rule.id).toBeGreaterThan(0)
      expect(rule.description.length, rule.id).toBeGreaterThan(10)
    }
  })

  for (const rule of Secrets.defaultRules) {
    describe(rule.id, () => {
      const only = Secrets.unsafeMakeMasker({ rules: [rule] })
      const all = Secrets.unsafeMakeMasker()
      const testCase = allCases[rule.id] ?? { hit: [], keep: [] }

      it("masks the credential and nothing else", () => {
        for (const hit of testCase.hit) expect.soft(only.maskText(hit.text)).toBe(hit.expected)
      })

      it("keeps look-alikes", () => {
        for (const text of testCase.keep) expect.soft(only.maskText(text)).toBe(text)
      })

      it("masks the credential with the default rules too", () => {
        for (const hit of testCase.hit) {
          const masked = all.maskText(hit.text)
          expect(Buffer.byteLength(masked)).toBe(Buffer.byteLength(hit.text))
          for (const secret of hit.secrets) expect.soft(masked).not.toContain(secret)
        }
      })

      it("does not match across a line break", () => {
        if (rule.end !== undefined) return
        for (const hit of testCase.hit) {
          for (const secret of hit.secrets) {
            const half = Math.floor(secret.length / 2)
            const broken = hit.text.replace(secret, secret.slice(0, half) + "\n" + secret.slice(half))
            const masked = only.maskText(broken)
            // Whatever is masked on either side, the line break itself survives.
            expect(masked.split("\n").length).toBe(broken.split("\n").length)
          }
        }
      })

      it("masks a stream as the whole text, cut at any byte", () => {
        for (const hit of testCase.hit) {
          const bytes = Buffer.from(hit.text)
          for (const cut of new Set([1, 7, Math.floor(bytes.length / 3), Math.floor(bytes.length / 2), bytes.length - 2])) {
            if (cut <= 0 || cut >= bytes.length) continue
            const stream = all.stream()
            const out = Buffer.concat([stream.push(bytes.subarray(0, cut)), stream.push(bytes.subarray(cut)), stream.end()])
            expect.soft(out.toString("utf8"), `${rule.id} cut at ${cut}`).toBe(all.maskText(hit.text))
          }
        }
      })
    })
  }
})

describe("default rules on ordinary output", () => {
  const masker = Secrets.unsafeMakeMasker()
  const lines = [
    "2024-05-01T12:00:33.123Z [webpack] compiled successfully in 2345 ms",
    "npm WARN deprecated inflight@1.0.6: This module is not supported",
    "added 1234 packages, and audited 1235 packages in 12s",
    "GET https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz 200",
    "\"integrity\": \"sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXPs17LhbZVGedAJv8XZ1tvj5FvSg==\",",
    "commit 3f2c9a1b7d4e5f60718293a4b5c6d7e8f9012345",
    "Merge pull request #42 from org/feature/token-refresh",
    "  ✓ tokenizes input (3 ms)",
    "PASS src/secrets.test.ts",
    "request id 550e8400-e29b-41d4-a716-446655440000",
    "Step 4/9 : RUN apt-get update && apt-get install -y curl",
    "sha256:9b2a1c3d4e5f60718293a4b5c6d7e8f90123456789abcdef0123456789abcdef",
    "Compiling serde v1.0.188 (registry+https://github.com/rust-lang/crates.io-index)",
    "error TS2322: Type 'string' is not assignable to type 'number'.",
    "password authentication failed for user \"app\"",
    "Set the API_KEY environment variable, see https://example.com/docs#api-key",
    "TASK [install packages] *****************************************************",
    "disk-usage: 45% of /dev/sda1"
  ]
  it("leaves ordinary build output alone", () => {
    for (const line of lines) expect(masker.maskText(line)).toBe(line)
  })
})
