// Package events records Events about the objects a controller works
// on, so that `kubectl describe` shows what it did and why it refused:
// "secret web exists and this ConfigMap does not control it".
//
// # Where it sits
//
// Beside the data flow, at its end: a reconcile reads from the informers'
// caches, writes to the API server, and records an Event about what it
// decided. Recording never waits for the API server or for Run; a
// Recorder's Run sends. (An Eventf that drops its Event writes the
// warning itself, at most one every 10 s, so a log handler that blocks
// holds that Eventf up:
// TestAnEventfThatDropsItsEventWaitsForTheLogHandlerAndNoOtherEventfDoes.)
//
//	reconcile ──Eventf──▶ Recorder (series by object, type, reason, action, note)
//	          Run ──create / series patch, within QPS and Burst──▶ events.k8s.io/v1
//	kubectl describe ◀── the same Events, read through core/v1
//
// # Usage
//
//	recorder, err := events.New(cfg, events.Options{Controller: "example.com/secret-copier", Scheme: scheme})
//	go recorder.Run(ctx)
//	// then, in a reconcile:
//	err = recorder.Eventf(cm, events.Warning, "SecretNotOurs", "Create", "secret %s exists and this ConfigMap does not control it", key.Name)
//
// The service account needs create and patch on events (events.k8s.io).
//
// # Invariants
//
//   - One Event per series: occurrences with the same object (whatever
//     its resourceVersion), type, reason, action and note within six
//     minutes of the last are one Event. The first is created at once; the repeats' count and last
//     time are written to its series at most every 10 s, as the
//     events.k8s.io/v1 API intends, so a controller that records the same
//     refusal on every retry writes one Event, not one per retry.
//     Proved by TestRepeatsAreOneEventWhoseSeriesIsWrittenAtMostEvery10s,
//     TestTheSameObjectAtANewResourceVersionIsStillOneSeries and
//     TestAnOccurrenceSixMinutesAfterTheLastIsANewEvent.
//   - An Event is never created twice: repeats that arrive while its
//     create is in flight are written to its series afterwards, and a
//     create that got no answer (a cut connection, a timeout) or a
//     server error (5xx) is taken as created, since it may have landed;
//     one answered 409 AlreadyExists landed (a retry met it, or an
//     earlier create of it landed late: its series is written again)
//     and is counted as created, as is one taken as created once a
//     series update finds it.
//     Each Event's name is valid, whatever the object's name, and
//     unique, from one Recorder or two. When a series write finds its
//     Event gone (the API server keeps one an hour; anyone may delete
//     one; a create taken as created has not landed), the occurrences it
//     never stored are created anew: under its own name if it stored
//     none, so that a first create the server finishes late (after its
//     client gave up) meets it, 409, and makes no second Event (should
//     the remade create go unanswered too, the first may land before it
//     with fewer occurrences: the series is written again, or the Event
//     made anew again, within the series' six minutes); as a new Event
//     otherwise. (One taken as created that landed and was deleted
//     since is told by the same 404, so it too is remade whole, under
//     its own name: the deleted Event's occurrences are counted again,
//     never lost.) Proved by
//     TestAnEventIsNeverCreatedTwiceWhileItsCreateIsInFlight,
//     TestAnEventWhoseCreateAnswerWasLostIsNotCreatedTwice,
//     TestAnEventWhoseCreateWasCutBeforeItLandedIsCreatedByTheNextOccurrence,
//     TestACreateThatLandedAnsweredBadGatewayIsNotCreatedTwice,
//     TestACreateTheRESTClientRetriedAfterItLandedIsNotCreatedTwice,
//     TestACreateTheRESTClientRetriedAfterItLandedIsCountedAsCreated,
//     TestACreateWhoseAnswerWasLostIsCountedAsCreatedOnceItsSeriesUpdateFindsIt,
//     TestACreateThatLandsAfterItsClientGaveUpIsNotCreatedTwice,
//     TestACreateThatLandsJustBeforeItIsMadeAnewStillCountsEveryOccurrence,
//     TestARemadeCreateThatLandsAfterTheFirstStillCountsEveryOccurrence,
//     TestARemadeCreateIsMadeAgainOnlyWithinItsSeriesWindow,
//     TestACutCreateRemadeByTheNextOccurrenceCountsBothOccurrences,
//     TestOccurrencesOfACutCreateAreNotLostWhenANewSeriesStartsMeanwhile,
//     TestTwoEventsAboutOneObjectAtOneInstantAreBothCreated,
//     TestTwoRecordersRecordingAboutOneObjectAtOneInstantCreateTwoEvents,
//     TestAnEventsNameStartsWithTheObjectsNameMadeValid,
//     TestARemadeEventCountsEveryOccurrenceTheServerDidNotStore and
//     TestAnEventTakenAsCreatedThatLandedAndWasDeletedIsRemadeWithEveryOccurrence.
//   - Bounded: the Recorder's writes are limited (Options.QPS, Burst),
//     each write lasts at most Options.RequestTimeout, and past
//     Options.MaxPending Events waiting to be created a new one is
//     dropped, counted in Stats.Dropped and logged, never waiting for
//     Run or the API server, as is one still waiting to be created when
//     Run returns (logged even within 10 s of another warning: no later
//     one would tell of it), or recorded after
//     (TestTheRecorderLimitsItsOwnWrites,
//     TestAHungCreateHoldsTheNextEventBackOnlyForTheRequestTimeout,
//     TestPastMaxPendingAnEventIsDroppedCountedAndLogged,
//     TestAnEventRecordedAfterRunReturnedIsDroppedCountedAndLogged,
//     TestAnEventStillWaitingWhenRunReturnsIsCountedAsDroppedAndLogged,
//     TestTheDropAsRunReturnsIsLoggedEvenJustAfterAnotherWarning).
//   - Nothing refused silently: arguments the API server would refuse are
//     an error from Eventf; a write it refuses is counted in
//     Stats.Refused and logged (at most one warning every 10 s), not
//     retried; occurrences recorded while a refused write was in flight
//     are written next: after a series update, with the count so far;
//     after a create, as a new Event. A refusal that comes as Run's ctx
//     ends is counted and logged too, as is a write that ctx's end cuts
//     (a create so cut may have landed: it is taken as created; a
//     series update so cut is logged as cut, not refused), and a series
//     update that gets no answer while Run goes on (a timeout) is
//     counted and logged as unanswered, not refused. Proved by
//     TestArgumentsTheAPIServerWouldRefuseAreErrorsNamingThem,
//     TestAnOccurrenceRecordedWhileASeriesUpdateTimesOutIsStillWritten,
//     TestAnOccurrenceRecordedWhileARefusedCreateWasInFlightIsCreatedNext,
//     TestACreateRefusedAsRunsContextEndsIsCountedAndItsRepeatDropped,
//     TestACreateCutAsRunsContextEndsIsCountedAndLogged,
//     TestASeriesUpdateCutAsRunsContextEndsIsLoggedAsCutNotRefused,
//     TestASeriesUpdateThatTimesOutIsLoggedAsUnansweredNotRefused and
//     TestARefusedCreateIsCountedAndLoggedAndTheNextOccurrenceTriesAnew
//     (one warning per 10 s:
//     TestPastMaxPendingAnEventIsDroppedCountedAndLogged).
package events
