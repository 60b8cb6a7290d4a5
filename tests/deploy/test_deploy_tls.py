"""TLS end to end: a CA and certificates made here (the ``cryptography`` package that
distributed installs), a ``dask scheduler --protocol tls`` and a ``dask worker`` as real
processes on 127.0.0.1 (ended by PID, see conftest.py), a UTS search through a
``kind: tls`` cluster config, and clients without certificates refused in one line."""
import datetime
import ipaddress
import json
import shutil
from pathlib import Path

import pytest

from stealsearch.engine.deploy.cluster import read_cluster_config
from stealsearch.engine.core.errors import InputError
from stealsearch.cli import main

from conftest import DASK, free_port, wait_listening

REPO_CONFIG = Path(__file__).resolve().parents[2] / "cluster_configs" / "tls.yaml"


def make_certificates(d: Path) -> dict:
    """A CA, and one certificate + key it signs (for 127.0.0.1/localhost), as PEM files."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)

    def name(cn):
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    def write_key(key, path):
        path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder().subject_name(name("stealsearch test CA"))
          .issuer_name(name("stealsearch test CA")).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False,
                                       data_encipherment=False, key_agreement=False,
                                       encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(name("localhost"))
            .issuer_name(ca.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                critical=False)
            .sign(ca_key, hashes.SHA256()))
    d.mkdir(parents=True, exist_ok=True)
    (d / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    (d / "client.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    write_key(key, d / "client-key.pem")
    return {"ca": d / "ca.pem", "cert": d / "client.pem", "key": d / "client-key.pem"}


def test_uts_over_tls_and_clients_without_certificates_refused(dask_processes, tmp_path, capsys):
    certs = make_certificates(tmp_path / "certs")
    flags = ["--tls-ca-file", str(certs["ca"]), "--tls-cert", str(certs["cert"]),
             "--tls-key", str(certs["key"])]
    port = free_port()
    sched = dask_processes._start("scheduler", [
        DASK, "scheduler", "--protocol", "tls", "--host", "127.0.0.1", "--port", str(port),
        "--no-dashboard", *flags])
    wait_listening(port, sched, 60)
    address = f"tls://127.0.0.1:{port}"
    dask_processes._start("worker", [DASK, "worker", address, "--nworkers", "2",
                                     "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1",
                                     "--local-directory", str(tmp_path), *flags])
    # the shipped config, with this scheduler's port (its file paths are relative to it)
    config = tmp_path / "tls.yaml"
    config.write_text(REPO_CONFIG.read_text().replace("tls://127.0.0.1:8786", address))
    plan = read_cluster_config(str(config))
    assert plan.kind == "tls" and plan.address == address and plan.security.require_encryption

    assert main(["uts", "--tree", "default", "--cluster-config", str(config), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["count"] == 1732 and out["status"] == "exhausted"
    assert all(w["worker"].startswith("tls://127.0.0.1:") for w in out["workers"])

    # no certificate at all: refused before connecting, one line, exit 2
    assert main(["uts", "--tree", "default", "--scheduler", address, "--json",
                 "--connect-timeout", "5"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no client certificate" in err
    # plain TCP to the TLS port: no handshake, one line, exit 2
    assert main(["uts", "--tree", "default", "--scheduler", f"tcp://127.0.0.1:{port}",
                 "--json", "--connect-timeout", "3"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("stealsearch: error:")
    # a certificate from another CA: the scheduler refuses the handshake
    other = make_certificates(tmp_path / "other")
    for f in ("client.pem", "client-key.pem"):
        shutil.copy(other["cert" if f == "client.pem" else "key"], tmp_path / "certs" / f"x-{f}")
    bad = tmp_path / "bad.yaml"
    bad.write_text(config.read_text().replace("certs/client", "certs/x-client"))
    assert main(["uts", "--tree", "default", "--cluster-config", str(bad), "--json",
                 "--connect-timeout", "5"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("stealsearch: error:")


def test_tls_config_checks(tmp_path):
    certs = make_certificates(tmp_path / "certs")
    good = (f"kind: tls\naddress: tls://127.0.0.1:8786\ntls_ca_file: {certs['ca']}\n"
            f"tls_client_cert: {certs['cert']}\ntls_client_key: {certs['key']}\n")
    (tmp_path / "ok.yaml").write_text(good)
    assert read_cluster_config(str(tmp_path / "ok.yaml")).address == "tls://127.0.0.1:8786"
    cases = {
        "tcp.yaml": (good.replace("tls://", "tcp://"), "needs a tls://"),
        "nofile.yaml": (good.replace(str(certs["ca"]), "nowhere.pem"), "no such file"),
        "missing.yaml": ("kind: tls\naddress: tls://127.0.0.1:1\n", "needs tls_ca_file"),
        "typo.yaml": (good + "tls_cert: x\n", "unknown key 'tls_cert'"),
    }
    for fname, (text, message) in cases.items():
        (tmp_path / fname).write_text(text)
        with pytest.raises(InputError, match=message):
            read_cluster_config(str(tmp_path / fname))
