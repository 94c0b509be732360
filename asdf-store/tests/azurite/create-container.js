// Creates a blob container in Azurite, signed with the emulator's well-known account key
// (object_store has no call for it): node create-container.js PORT CONTAINER
"use strict";
const crypto = require("crypto");
const http = require("http");

const [port, container] = process.argv.slice(2);
const account = "devstoreaccount1";
const key = Buffer.from(
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
  "base64",
);
const date = new Date().toUTCString();
const version = "2021-08-06";
const toSign = [
  "PUT", "", "", "", "", "", "", "", "", "", "", "",
  `x-ms-date:${date}\nx-ms-version:${version}`,
  `/${account}/${account}/${container}\nrestype:container`,
].join("\n");
const sig = crypto.createHmac("sha256", key).update(toSign, "utf8").digest("base64");
const req = http.request(
  {
    host: "127.0.0.1",
    port: Number(port),
    method: "PUT",
    path: `/${account}/${container}?restype=container`,
    headers: {
      "x-ms-date": date,
      "x-ms-version": version,
      "Content-Length": 0,
      Authorization: `SharedKey ${account}:${sig}`,
    },
  },
  (res) => {
    res.resume();
    res.on("end", () => {
      console.log(res.statusCode);
      process.exit(res.statusCode === 201 ? 0 : 1);
    });
  },
);
req.on("error", (e) => {
  console.error(e.message);
  process.exit(1);
});
req.end();
