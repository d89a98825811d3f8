"""SEAL side of the vsp-ckks interoperability test (seal-python 4.4, `pip install seal-python numpy`).

  gen DIR    SEAL makes the keys (public, secret, relinearisation) and two ciphertexts of known
             complex values (public-key and symmetric encryption); everything saved uncompressed.
  check DIR  SEAL loads the ciphertexts vsp-ckks wrote (public-key, seeded symmetric, product),
             decrypts them, evaluates on ours (multiply, relinearize, rescale), and checks the values.
Exits non-zero with a message on any mismatch.
"""
import os
import sys

import seal

N = 4096
PRIMES = [1053818881, 1054015489, 1054212097, 417793]
SCALE = 2.0 ** 25


def real_values(k):
    return [((j * 37) % 101) / 10.0 - 5.0 for j in range(k)]


def complex_values(k):
    return [complex(((j * 37) % 101) / 10.0 - 5.0, ((j * 53) % 97) / 10.0 - 4.0) for j in range(k)]


def context():
    p = seal.EncryptionParameters(seal.scheme_type.ckks)
    p.set_poly_modulus_degree(N)
    p.set_coeff_modulus([seal.Modulus(q) for q in PRIMES])
    ctx = seal.SEALContext(p)
    if not ctx.parameters_set():
        sys.exit("SEAL rejected the parameters: " + ctx.parameter_error_message())
    return ctx


def gen(d):
    ctx = context()
    kg = seal.KeyGenerator(ctx)
    pk = seal.PublicKey()
    kg.create_public_key(pk)
    pk.save(os.path.join(d, "seal_pk.bin"))
    kg.secret_key().save(os.path.join(d, "seal_sk.bin"))
    kg.create_relin_keys().save(os.path.join(d, "seal_rk.bin"))
    enc = seal.CKKSEncoder(ctx)
    pt = enc.encode_complex(complex_values(N // 2), SCALE)
    e = seal.Encryptor(ctx, pk)
    e.encrypt(pt).save(os.path.join(d, "seal_ct.bin"), seal.compr_mode_type.none)
    e.set_secret_key(kg.secret_key())
    e.encrypt_symmetric(pt).save(os.path.join(d, "seal_ct_sym.bin"), seal.compr_mode_type.none)


def check(d):
    ctx = context()
    sk = seal.SecretKey()
    sk.load(ctx, os.path.join(d, "seal_sk.bin"))
    rk = seal.RelinKeys()
    rk.load(ctx, os.path.join(d, "seal_rk.bin"))
    dec = seal.Decryptor(ctx, sk)
    enc = seal.CKKSEncoder(ctx)
    ev = seal.Evaluator(ctx)
    want = real_values(N // 2)
    worst = {}

    def expect(name, ct, values, tol):
        got = enc.decode(dec.decrypt(ct))
        err = max(abs(float(g) - v) for g, v in zip(got, values))
        worst[name] = err
        if not err < tol:
            sys.exit(f"{name}: SEAL decrypts values off by {err} (tolerance {tol})")

    cts = {}
    # ours_buffer_*: the allocation-free BufferEncryptor with plain loaded NTT roots, an index map
    # read from a (flash) table and a secret key streamed from storage per prime.
    for name in ["ours_asym", "ours_seeded", "ours_sym_full", "ours_buffer_seeded", "ours_buffer_asym"]:
        ct = seal.Ciphertext()
        ct.load(ctx, os.path.join(d, name + ".bin"))
        if ct.parms_id() != ctx.first_parms_id() or ct.size() != 2 or not ct.is_ntt_form():
            sys.exit(f"{name}: unexpected metadata after load")
        # Public-key noise e0 + e_pk·u + e1·s is not divided by the special prime on the device
        # (SEAL-Embedded's design): about 2^-9 worst case at scale 2^25; symmetric is ~2^-14.
        expect(name, ct, want, 1e-2 if name.endswith("asym") else 1e-3)
        cts[name] = ct
    sq = [v * v for v in want]
    prod = seal.Ciphertext()
    prod.load(ctx, os.path.join(d, "ours_prod.bin"))
    expect("ours_prod (our multiply+relin+rescale, SEAL keys)", prod, sq, 0.05)
    # SEAL evaluates on our ciphertexts.
    p = ev.multiply(cts["ours_asym"], cts["ours_seeded"])
    ev.relinearize_inplace(p, rk)
    ev.rescale_to_next_inplace(p)
    expect("SEAL multiply of ours", p, sq, 0.05)
    for k, v in worst.items():
        print(f"{k}: max error {v:.3e}")


if __name__ == "__main__":
    {"gen": gen, "check": check}[sys.argv[1]](sys.argv[2])
