"""One place's flood holds at most its share of the answering threads; another place is still answered."""

import threading

from bot.places.fairness import InFlight


def test_a_place_past_its_share_is_refused_and_another_place_is_admitted():
    inflight = InFlight(share=2)
    release = threading.Event()
    admitted: list[bool] = []
    entered = threading.Barrier(3)

    def flood():
        with inflight.one("slack-TFLOOD") as ok:
            admitted.append(ok)
            entered.wait()
            release.wait(10)

    threads = [threading.Thread(target=flood) for _ in range(2)]
    for t in threads:
        t.start()
    entered.wait()  # both of the flooding place's requests are in
    with inflight.one("slack-TFLOOD") as third:
        assert third is False  # past its share: refused at once, holding no thread
    with inflight.one("slack-TOTHER") as other:
        assert other is True  # another place is answered meanwhile
    release.set()
    for t in threads:
        t.join()
    assert admitted == [True, True]
    with inflight.one("slack-TFLOOD") as again:
        assert again is True  # its share is back once its requests are answered
