"""What refers to what in a render of the mqnamesrv chart (tests/package/helm.sh): the checks a
schema cannot make. Prints `RESULT pass|fail WHAT` lines; writes the rendered namesrv.conf and,
when there is one, the PrometheusRule's groups as a rule file into OUT_DIR.

    chart_refs.py RENDER.yaml OUT_DIR CONTRIB_DIR
"""
import json
import os
import sys

import yaml

render, out_dir, contrib = sys.argv[1:4]
os.makedirs(out_dir, exist_ok=True)
docs = [d for d in yaml.safe_load_all(open(render)) if d]
by_kind = {}
for d in docs:
    by_kind.setdefault(d["kind"], []).append(d)


def check(what, ok, detail=""):
    print("RESULT %s %s%s" % ("pass" if ok else "fail", what, "" if ok else ": " + str(detail)))


def subset(small, big):
    return all(big.get(k) == v for k, v in (small or {}).items())


sts = by_kind["StatefulSet"][0]
pod = sts["spec"]["template"]
pod_labels = pod["metadata"]["labels"]
pod_spec = pod["spec"]
container = pod_spec["containers"][0]
ports = {p["name"]: p["containerPort"] for p in container.get("ports", [])}
mounts = {m["mountPath"]: m for m in container.get("volumeMounts", [])}
volumes = {v["name"]: v for v in pod_spec.get("volumes", [])}
claims = {c["metadata"]["name"] for c in sts["spec"].get("volumeClaimTemplates", [])}

check("the StatefulSet's selector matches its pods' labels",
      subset(sts["spec"]["selector"]["matchLabels"], pod_labels))

# ---- the config ----------------------------------------------------------------------------------
args = container.get("args", [])
conf_path = args[args.index("-c") + 1] if "-c" in args else None
check("the server is started with -c FILE", conf_path is not None, args)
conf_mount = mounts.get(os.path.dirname(conf_path or "/"))
cms = {c["metadata"]["name"]: c for c in by_kind.get("ConfigMap", [])}
conf_cm = None
if conf_mount and conf_mount["name"] in volumes:
    conf_cm = cms.get(volumes[conf_mount["name"]].get("configMap", {}).get("name"))
check("-c names a file of a rendered ConfigMap mounted there",
      conf_cm is not None and os.path.basename(conf_path) in conf_cm["data"])
conf_text = conf_cm["data"][os.path.basename(conf_path)] if conf_cm else ""
with open(os.path.join(out_dir, "namesrv.conf"), "w") as f:
    f.write(conf_text)
conf = {}
for line in conf_text.splitlines():
    if line and not line.startswith("#") and "=" in line:
        k, v = line.split("=", 1)
        conf[k] = v
check("listenPort is the container's remoting port",
      str(ports.get("remoting")) == conf.get("listenPort"), (ports, conf.get("listenPort")))
check("a config checksum on the pods (a changed config restarts them)",
      "checksum/config" in pod["metadata"].get("annotations", {}))

# ---- volumes, mounts, what may be written --------------------------------------------------------
unknown = [m["name"] for m in container["volumeMounts"] if m["name"] not in volumes and m["name"] not in claims]
check("every mount names a volume or a volume claim template", not unknown, unknown)
unused = [n for n in list(volumes) + list(claims) if n not in {m["name"] for m in container["volumeMounts"]}]
check("every volume is mounted", not unused, unused)
for path in ("/home/rocketmq/namesrv", "/home/rocketmq/logs", "/home/rocketmq/store"):
    check("%s (written by the server) is a volume" % path, path in mounts)
psc, csc = pod_spec.get("securityContext", {}), container.get("securityContext", {})
check("non-root: runAsNonRoot, uid 3000 (the image's user), fsGroup 3000",
      psc.get("runAsNonRoot") is True and psc.get("runAsUser") == 3000 and psc.get("fsGroup") == 3000)
check("read-only root file system, no privilege escalation, no capabilities",
      csc.get("readOnlyRootFilesystem") is True and csc.get("allowPrivilegeEscalation") is False
      and csc.get("capabilities", {}).get("drop") == ["ALL"])


def secret_file(key, volume_kind):
    path = conf.get(key)
    mount = mounts.get(os.path.dirname(path or "/"))
    ok = (mount is not None and "subPath" not in mount and mount.get("readOnly") is True
          and "secret" in volumes.get(mount["name"], {}))
    check("%s is in a %s Secret mounted as a directory (no subPath: the kubelet updates it)"
          % (key, volume_kind), ok, (path, mount))


if conf.get("aclEnable") == "true":
    secret_file("aclPlainFile", "ACL")
if "tls.server.certPath" in conf:
    for key in ("tls.server.certPath", "tls.server.keyPath"):
        secret_file(key, "TLS")
    if "tls.server.trustCertPath" in conf:
        secret_file("tls.server.trustCertPath", "TLS")

# ---- probes and metrics --------------------------------------------------------------------------
for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/livez")):
    p = container.get(probe, {})
    if conf.get("metricsExporterType") == "PROM":
        check("%s: GET %s on the metrics port" % (probe, path),
              p.get("httpGet", {}).get("path") == path and p["httpGet"].get("port") == "metrics")
    else:
        check("%s: TCP on the remoting port" % probe, p.get("tcpSocket", {}).get("port") == "remoting")
if conf.get("metricsExporterType") == "PROM":
    check("metricsPromExporterPort is the container's metrics port",
          str(ports.get("metrics")) == conf.get("metricsPromExporterPort"))
if conf.get("enableShutdownGracefully") == "true":
    wait = int(conf.get("shutdownWaitTimeSeconds", "30"))
    check("terminationGracePeriodSeconds covers the graceful wait and the stop (wait + 8 s)",
          pod_spec.get("terminationGracePeriodSeconds", 30) >= wait + 8)

# ---- services --------------------------------------------------------------------------------------
services = {s["metadata"]["name"]: s for s in by_kind.get("Service", [])}
headless = services.get(sts["spec"]["serviceName"])
check("serviceName is a headless Service that publishes pods before they are ready",
      headless is not None and headless["spec"].get("clusterIP") == "None"
      and headless["spec"].get("publishNotReadyAddresses") is True)
for name, svc in services.items():
    check("Service %s selects the pods" % name, subset(svc["spec"]["selector"], pod_labels))
    bad = [p for p in svc["spec"]["ports"] if p.get("targetPort") not in ports]
    check("Service %s targets named container ports" % name, not bad, bad)
for pdb in by_kind.get("PodDisruptionBudget", []):
    check("the PodDisruptionBudget selects the pods", subset(pdb["spec"]["selector"]["matchLabels"], pod_labels))

for sm in by_kind.get("ServiceMonitor", []):
    sel = sm["spec"]["selector"]["matchLabels"]
    matched = [n for n, s in services.items() if subset(sel, s["metadata"]["labels"])]
    check("the ServiceMonitor selects the headless Service only", matched == [headless["metadata"]["name"]], matched)
    svc_ports = {p["name"] for p in headless["spec"]["ports"]}
    check("the ServiceMonitor scrapes a port of that Service",
          all(e["port"] in svc_ports for e in sm["spec"]["endpoints"]))
    check("its job label is 'mqnamesrv' (what contrib's alert rules expect)",
          headless["metadata"]["labels"].get(sm["spec"].get("jobLabel")) == "mqnamesrv")
for pm in by_kind.get("PodMonitor", []):
    check("the PodMonitor selects the pods", subset(pm["spec"]["selector"]["matchLabels"], pod_labels))
    check("the PodMonitor scrapes a named container port",
          all(e["port"] in ports for e in pm["spec"]["podMetricsEndpoints"]))
    check("its job label is 'mqnamesrv'", pod_labels.get(pm["spec"].get("jobLabel")) == "mqnamesrv")
alerts = yaml.safe_load(open(os.path.join(contrib, "prometheus", "alerts.yml")))
for rule in by_kind.get("PrometheusRule", []):
    check("the PrometheusRule holds contrib's rule groups", rule["spec"]["groups"] == alerts["groups"])
    with open(os.path.join(out_dir, "prometheusrule.yml"), "w") as f:
        yaml.safe_dump({"groups": rule["spec"]["groups"]}, f)
for name, cm in cms.items():
    if "mqnamesrv.json" in cm.get("data", {}):
        dash = json.load(open(os.path.join(contrib, "grafana", "mqnamesrv.json")))
        check("the dashboard ConfigMap holds contrib's dashboard", json.loads(cm["data"]["mqnamesrv.json"]) == dash)
    for key, text in cm.get("data", {}).items():
        if key.endswith("alerts.yml"):
            check("the alert rules ConfigMap holds contrib's rules", yaml.safe_load(text) == alerts)

# ---- the embedded controller (values arriving with it) -------------------------------------------
if conf.get("enableControllerInNamesrv") == "true":
    replicas = sts["spec"]["replicas"]
    peers = conf.get("controllerDLegerPeers", "").split(";")
    want = ["n%d-%s-%d.%s:%d" % (i, sts["metadata"]["name"], i, headless["metadata"]["name"],
                                ports.get("controller", -1)) for i in range(replicas)]
    check("controllerDLegerPeers: every pod's stable address on the controller port", peers == want, peers)
    check("the controller port is on the headless Service",
          any(p.get("targetPort") == "controller" for p in headless["spec"]["ports"]))
    env = {e["name"]: e for e in container.get("env", [])}
    check("controllerDLegerSelfId=n<pod index> (the pod-index label, through POD_INDEX)",
          "controllerDLegerSelfId=n$(POD_INDEX)" in args
          and env.get("POD_INDEX", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
          == "metadata.labels['apps.kubernetes.io/pod-index']")
    store = conf.get("controllerStorePath", "")
    check("the controller's store is on the data volume", store.startswith("/home/rocketmq/store/"))
